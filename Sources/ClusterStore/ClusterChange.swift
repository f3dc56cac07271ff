public import PostgreSQL

/// What one node tells the others when a task or a session's feed changed, so each wakes the
/// long-polls it holds for it (docs/cluster.md, "Where each kind of request goes"). Sent with
/// NOTIFY on one channel; PostgreSQL delivers it when the sending transaction commits, and never
/// when it rolls back, so a long-poll never wakes for a change that did not happen.
public struct ClusterChange: Sendable, Equatable {
    public let session: String
    /// The task that changed; nil for a change of the session's feed alone.
    public let task: Int?

    public init(session: String, task: Int?) {
        self.session = session
        self.task = task
    }

    /// The channel every node listens on.
    public static let channel = "transferd_changes"

    /// The payload: the session id, then the task id when there is one, space-separated
    /// (session ids are the daemon's UUIDs: no spaces).
    var payload: String { task.map { "\(session) \($0)" } ?? session }

    init?(payload: String) {
        let parts = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard let session = parts.first, !session.isEmpty, parts.count <= 2 else { return nil }
        if parts.count == 2 {
            guard let task = Int(parts[1]) else { return nil }
            self.init(session: String(session), task: task)
        } else {
            self.init(session: String(session), task: nil)
        }
    }

    /// Sends the change, delivered when `transaction` commits.
    public func send(in transaction: PostgresConnection.Transaction) throws {
        try transaction.run("SELECT pg_notify($1, $2)", Self.channel, payload)
    }

    /// Sends the change at once (outside any transaction).
    public func send(on database: PostgresConnection) throws {
        try database.run("SELECT pg_notify($1, $2)", Self.channel, payload)
    }
}
