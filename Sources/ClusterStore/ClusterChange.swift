public import PostgreSQL
package import TransferStore

/// How a `ClusterSignal` travels: a NOTIFY on one channel every node listens on. PostgreSQL
/// delivers a notification when the sending transaction commits, and never when it rolls back,
/// so a node never wakes for a change that did not happen; identical notifications of one
/// transaction are delivered once.
///
/// The payload is a letter and fields, space-separated: `f SESSION`, `t SESSION TASK`,
/// `T SESSION`, `s SESSION`, `q`, `c ID NODE` (the node id last: it may hold anything but a newline), `a ID`,
/// `S NAME` (a setting's name: no spaces).
/// Session ids are the daemon's UUIDs (no spaces).
enum ClusterChange {
    /// The channel every node listens on.
    static let channel = "transferd_changes"

    static func payload(_ signal: ClusterSignal) -> String {
        switch signal {
        case .feed(let session): "f \(session)"
        case .task(let session, let id): "t \(session) \(id)"
        case .tasks(let session): "T \(session)"
        case .session(let session): "s \(session)"
        case .queue: "q"
        case .command(let id, let node): "c \(id) \(node)"
        case .answer(let id): "a \(id)"
        case .setting(let name): "S \(name)"
        }
    }

    static func signal(payload: String) -> ClusterSignal? {
        if payload == "q" { return .queue }
        let parts = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, !parts[1].isEmpty else { return nil }
        switch (parts[0], parts.count) {
        case ("f", 2): return .feed(session: parts[1])
        case ("T", 2): return .tasks(session: parts[1])
        case ("s", 2): return .session(parts[1])
        case ("t", 3): return Int(parts[2]).map { .task(session: parts[1], id: $0) }
        case ("c", 3): return Int(parts[1]).flatMap { id in parts[2].isEmpty ? nil : .command(id: id, node: parts[2]) }
        case ("a", 2): return Int(parts[1]).map { .answer(id: $0) }
        case ("S", 2): return .setting(parts[1])
        default: return nil
        }
    }

    /// Sends the signals, delivered when `transaction` commits (one statement for all).
    static func send(_ signals: [ClusterSignal], in transaction: PostgresConnection.Transaction) throws {
        guard !signals.isEmpty else { return }
        try transaction.run("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", channel, PostgresArrays.texts(signals.map(payload)))
    }

    /// Sends a signal at once (outside any transaction).
    static func send(_ signal: ClusterSignal, on database: PostgresConnection) throws {
        try database.run("SELECT pg_notify($1, $2)", channel, payload(signal))
    }
}
