package import FoundationEssentials
internal import SQLite
package import TransferModel

/// The events one commit writes, one row per session and owner instead of one per event: a
/// 16 KiB download queues five events, and their row inserts (table and index) were a fifth of
/// the store writer's time per download (issue 18, perf of bench/scheduler.sh part a).
///
/// A row holds one event as its JSON object (every row written before this), or several as an
/// array of them in seq order. Its key `seq` is its newest event's, so the table's `MAX(seq)`,
/// a prune (rows older than the oldest event kept) and an acknowledgement (rows up to a seq)
/// work on whole rows; a row that straddles either keeps its older events, and `decode` plus the
/// start's filters (the newest `limit` per session, nothing at or below the session's
/// `acknowledgedEventSeq`) leave them out.
///
/// Partitioned as the single rows were: a row holds the events of one session and one owner
/// (the task's tenant, the `owner` column that keeps the shared session's events apart).
package struct EventRows {
    private struct Key: Hashable {
        let session: String
        let owner: String?
    }

    private var groups: [Key: [TaskEvent]] = [:]
    /// The keys in the order their first event came, so rows are written in a stable order.
    private var order: [Key] = []

    package init() {}

    package var isEmpty: Bool { order.isEmpty }

    package mutating func add(_ event: TaskEvent) {
        let key = Key(session: event.sessionId, owner: event.owner)
        if groups[key] == nil { order.append(key) }
        groups[key, default: []].append(event)
    }

    /// One row of the `events` table.
    package struct Row: Sendable {
        /// The newest event's seq: the row's key.
        package let seq: Int
        package let session: String
        package let record: String
        package let owner: String?
    }

    /// The rows of what was added, and starts over empty.
    package mutating func take() -> [Row] {
        defer {
            groups.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
        }
        return order.compactMap { key in
            guard let events = groups[key], let newest = events.last else { return nil }
            return Row(seq: newest.seq, session: key.session, record: Self.record(events), owner: key.owner)
        }
    }

    /// Inserts the rows (SQLite) and starts over empty.
    mutating func write(_ tx: Database.Transaction) throws {
        for row in take() {
            // OR IGNORE: a row already there under this key holds the same newest event.
            try tx.run("INSERT OR IGNORE INTO events(seq, session_id, record, owner) VALUES(?, ?, ?, ?)",
                       row.seq, row.session, row.record, row.owner)
        }
    }

    /// One event's JSON object, or an array of several.
    static func record(_ events: [TaskEvent]) -> String {
        if events.count == 1 { return String(decoding: events[0].jsonData(), as: UTF8.self) }
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(events.count * 320)
        for (index, event) in events.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: event.jsonData())
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The events of a row's record, either form, each given the row's owner.
    package static func decode(_ record: Data, owner: String?) throws -> [TaskEvent] {
        var events = record.first == UInt8(ascii: "[")
            ? try JSONCoding.decoder.decode([TaskEvent].self, from: record)
            : [try JSONCoding.decoder.decode(TaskEvent.self, from: record)]
        for index in events.indices { events[index].owner = owner }
        return events
    }
}
