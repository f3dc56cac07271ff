internal import FoundationEssentials
public import PostgreSQL
package import TransferModel
package import TransferStore

/// The cluster store's side of the queued writer (`QueuedWriter`, the same rules as SQLite's:
/// group commit, settle, retry, health): each `StoreOperation` as PostgreSQL SQL, a batch in one
/// transaction. Rows keep their version rule (an older task or session never replaces a newer
/// one) whichever node writes. Partitioned as the SQLite store is: each row carries its owner.
///
/// A task row's place in the queue and its lease travel with it (`TaskPlacement`, written by
/// `GatheredRows`): a held row is written only under its lease's epoch.
///
/// Each commit ends with the signals of what it changed (`ClusterChange`: the sessions whose
/// feed grew, the tasks whose rows were written), delivered to every node when it commits.
package struct PostgresWrites: WriteTarget {
    let database: PostgresConnection
    /// How many events a session's feed keeps (`GatheredRows.writeEvents`).
    let eventRetention: Int

    package init(database: PostgresConnection, eventRetention: Int = 10_000) {
        self.database = database
        self.eventRetention = eventRetention
    }

    /// A batch in one transaction. Its task rows, metrics and events are gathered
    /// (`GatheredRows`) and written as one statement each; the task rows and metrics before any
    /// other kind of operation and at the end, so what follows (bodies, deletions) finds them as
    /// it would row by row, the events before an operation that deletes events and at the end.
    /// (Response bodies stay one statement each: up to 64 MiB apiece, they go as binary
    /// parameters, not in an array literal.)
    package func commit(_ operations: [StoreOperation]) throws {
        try database.transaction { tx in
            var gathered = GatheredRows(eventRetention: eventRetention)
            for operation in operations {
                if gathered.add(operation) { continue }
                if case .saveSession(let session) = operation { gathered.noteSession(session.id) }
                if case .saveSetting(let name, _) = operation { gathered.noteSetting(name) }
                switch operation {
                case .pruneEvents, .deleteEvents: try gathered.writeEvents(tx)
                default: try gathered.writeTasksAndMetrics(tx)
                }
                if case .deleteTask(let id) = operation {
                    try Self.delete(task: id, &gathered, tx)
                    continue
                }
                try Self.apply(operation, tx)
            }
            try gathered.writeTasksAndMetrics(tx)
            try gathered.writeEvents(tx)
            try ClusterChange.send(gathered.signals(), in: tx)
        }
    }

    package func probe() throws {
        try database.run("""
            INSERT INTO counters (name, value) VALUES ('store_probe', 1)
            ON CONFLICT (name) DO UPDATE SET value = counters.value + 1
            """)
    }

    /// 53100 (disk_full) and 53xxx (out of resources) read as the disk being full; anything
    /// else as the database being unavailable.
    /// - SeeAlso: https://www.postgresql.org/docs/15/errcodes-appendix.html
    package func failure(of error: any Error) -> StoreFailure {
        guard let error = error as? PostgresError else { return StoreFailure(kind: .unavailable, reason: "\(error)") }
        let full = error.sqlState == "53100"
        return StoreFailure(kind: full ? .diskFull : .unavailable, reason: "PostgreSQL \(error.sqlState): \(error.message)")
    }

    /// Class 22 (data exception) and 23 (integrity constraint violation): the row is refused
    /// whatever the disk does. Anything else, connection failures first, is tried again.
    package func isRejection(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.sqlState.hasPrefix("22") || error.sqlState.hasPrefix("23")
    }

    private static func apply(_ operation: StoreOperation, _ tx: PostgresConnection.Transaction) throws {
        switch operation {
        case .saveSession(let session):
            let identifier = session.state == .invalidated ? nil : session.identifier
            try tx.run("""
                INSERT INTO sessions (id, owner, identifier, record, version) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (id) DO UPDATE SET identifier = excluded.identifier, record = excluded.record, version = excluded.version
                WHERE excluded.version > sessions.version
                """, session.id, session.owner, identifier, try Store.json(session), session.version)
        case .saveTask, .saveTasks, .saveMetrics, .appendEvent:
            // Gathered by `commit`, never here.
            var alone = GatheredRows(eventRetention: .max)
            _ = alone.add(operation)
            try alone.writeTasksAndMetrics(tx)
            try alone.writeEvents(tx)
        case .saveBody(let taskId, let body):
            try tx.run("""
                INSERT INTO task_bodies (task_id, body) VALUES ($1, $2)
                ON CONFLICT (task_id) DO UPDATE SET body = excluded.body
                """, taskId, body)
        case .pruneEvents(let sessionId, let oldestKept):
            try tx.run("DELETE FROM events WHERE session_id = $1 AND seq < $2", sessionId, oldestKept)
        case .deleteEvents(let sessionId, let seq):
            try tx.run("DELETE FROM events WHERE session_id = $1 AND seq <= $2", sessionId, seq)
        case .saveWebhookSecret(let sessionId, let secret):
            try tx.run("""
                INSERT INTO webhook_secrets (session_id, secret) VALUES ($1, $2)
                ON CONFLICT (session_id) DO UPDATE SET secret = excluded.secret
                """, sessionId, secret)
        case .deleteTask(let id):
            var alone = GatheredRows(eventRetention: .max)
            try delete(task: id, &alone, tx)
        case .reserveTaskId(let id):
            try raise("max_task_id", to: id, tx)
        case .reserveFeedSeqs(let through):
            try raise("feed_seq_reserved", to: through, tx)
        case .cookies(let changes):
            for change in changes { try apply(change, tx) }
        case .saveSetting(let name, let json):
            try tx.run("""
                INSERT INTO settings (name, value) VALUES ($1, $2)
                ON CONFLICT (name) DO UPDATE SET value = excluded.value
                """, name, json)
        }
    }

    private static func apply(_ change: CookieRowChange, _ tx: PostgresConnection.Transaction) throws {
        switch change {
        case .save(let owner, let cookie):
            try tx.run("""
                INSERT INTO cookies (owner, name, domain, path, value, host_only, expires, secure, http_only, same_site, created_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                ON CONFLICT (owner, name, domain, path) DO UPDATE SET value = excluded.value, host_only = excluded.host_only,
                    expires = excluded.expires, secure = excluded.secure, http_only = excluded.http_only,
                    same_site = excluded.same_site, created_at = excluded.created_at
                """, owner, cookie.name, cookie.domain, cookie.path, cookie.value, cookie.isHostOnly,
                cookie.expiresDate?.timeIntervalSince1970 ?? 0, cookie.isSecure, cookie.isHTTPOnly,
                cookie.sameSitePolicy?.rawValue, cookie.createdAt.timeIntervalSince1970)
        case .delete(let owner, let key):
            try tx.run("DELETE FROM cookies WHERE owner = $1 AND name = $2 AND domain = $3 AND path = $4", owner, key.name, key.domain, key.path)
        case .deleteAll(let owner):
            try tx.run("DELETE FROM cookies WHERE owner = $1", owner)
        }
    }

    /// Deletes a task's rows and leaves a tombstone in its place in the change feed
    /// (`task_removals`, with the task's owner: a tenant is told only of its own), so a follower
    /// of `GET /v1/tasks` learns it is gone.
    private static func delete(task id: Int, _ gathered: inout GatheredRows, _ tx: PostgresConnection.Transaction) throws {
        try raise("max_task_id", to: id, tx)
        try tx.run("DELETE FROM task_bodies WHERE task_id = $1", id)
        try tx.run("DELETE FROM task_metrics WHERE task_id = $1", id)
        guard let row = try tx.run("DELETE FROM tasks WHERE id = $1 RETURNING session_id, owner", id).first,
              let session = row.string(0) else { return }
        try tx.run("INSERT INTO task_removals (feed_seq, task_id, owner) VALUES ($1, $2, $3)", try gathered.stamp(tx), id, row.string(1) ?? "")
        gathered.noteDeleted(session: session, id: id)
    }

    /// Raises a counter to at least `value` (ids and stamps handed out, never handed out again).
    private static func raise(_ name: String, to value: Int, _ tx: PostgresConnection.Transaction) throws {
        try tx.run("""
            INSERT INTO counters (name, value) VALUES ($1, $2)
            ON CONFLICT (name) DO UPDATE SET value = GREATEST(counters.value, excluded.value)
            """, name, value)
    }
}
