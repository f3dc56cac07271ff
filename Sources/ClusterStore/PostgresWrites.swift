internal import FoundationEssentials
public import PostgreSQL
package import TransferModel
package import TransferStore

/// The cluster store's side of the queued writer (`QueuedWriter`, the same rules as SQLite's:
/// group commit, settle, retry, health): each `StoreOperation` as PostgreSQL SQL, a batch in one
/// transaction. Rows keep their version rule (an older task or session never replaces a newer
/// one) whichever node writes. Partitioned as the SQLite store is: each row carries its owner.
///
/// Task ids and event sequence numbers still come from the writer's caller; the cluster's
/// sequences for them are an open question (docs/cluster.md).
package struct PostgresWrites: WriteTarget {
    let database: PostgresConnection

    package init(database: PostgresConnection) { self.database = database }

    /// A batch in one transaction. Its task rows and then its metrics are gathered and written as
    /// one statement each (`write`) before any other kind of operation and at the end, so what
    /// follows (bodies, deletions) finds them as it would row by row; its events as a row per
    /// session and owner, in one statement at the end. (Response bodies stay one statement each:
    /// up to 64 MiB apiece, they go as binary parameters, not in an array literal.)
    package func commit(_ operations: [StoreOperation]) throws {
        try database.transaction { tx in
            var events = EventRows()
            var tasks: [TaskRowColumns] = []
            var metrics: [(taskId: Int, record: String)] = []
            for operation in operations {
                switch operation {
                case .appendEvent(let event):
                    events.add(event)
                case .saveMetrics(let taskId, let taskMetrics):
                    metrics.append((taskId, String(decoding: taskMetrics.jsonData(), as: UTF8.self)))
                case .saveTask(let task, let body, let feedSeq):
                    tasks.append(TaskRowColumns(task, record: Store.record(task), requestBody: body, feedSeq: feedSeq))
                case .saveTasks(let rows):
                    for (row, record) in zip(rows, Store.records(of: rows)) {
                        tasks.append(TaskRowColumns(row.task, record: record, requestBody: row.requestBody, feedSeq: row.feedSeq))
                    }
                case .pruneEvents, .deleteEvents:
                    try Self.insert(events.take(), tx)
                    try Self.apply(operation, tx)
                default:
                    try Self.write(tasks, tx)
                    try Self.write(metrics: metrics, tx)
                    tasks.removeAll()
                    metrics.removeAll()
                    try Self.apply(operation, tx)
                }
            }
            try Self.write(tasks, tx)
            try Self.write(metrics: metrics, tx)
            try Self.insert(events.take(), tx)
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

    /// A commit's event rows in one statement (a row already there, from a retried commit,
    /// stays as it is).
    private static func insert(_ rows: [EventRows.Row], _ tx: PostgresConnection.Transaction) throws {
        guard !rows.isEmpty else { return }
        try tx.run("""
            INSERT INTO events (seq, session_id, record, owner)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
            ON CONFLICT (seq) DO NOTHING
            """, PostgresArrays.integers(rows.map(\.seq)), PostgresArrays.texts(rows.map(\.session)),
            PostgresArrays.texts(rows.map(\.record)), PostgresArrays.texts(rows.map(\.owner)))
    }

    /// Task metrics in one statement, after their tasks' rows (the foreign key); of one task's,
    /// the last, as row by row.
    private static func write(metrics: [(taskId: Int, record: String)], _ tx: PostgresConnection.Transaction) throws {
        guard !metrics.isEmpty else { return }
        var last: [Int: Int] = [:]
        for (index, entry) in metrics.enumerated() { last[entry.taskId] = index }
        let kept = metrics.indices.filter { last[metrics[$0].taskId] == $0 }.map { metrics[$0] }
        try tx.run("""
            INSERT INTO task_metrics (task_id, record) SELECT * FROM unnest($1::bigint[], $2::text[])
            ON CONFLICT (task_id) DO UPDATE SET record = excluded.record
            """, PostgresArrays.integers(kept.map(\.taskId)), PostgresArrays.texts(kept.map(\.record)))
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
        case .saveTask(let task, let body, let feedSeq):
            try write([TaskRowColumns(task, record: Store.record(task), requestBody: body, feedSeq: feedSeq)], tx)
        case .saveTasks(let rows):
            try write(zip(rows, Store.records(of: rows)).map { row, record in
                TaskRowColumns(row.task, record: record, requestBody: row.requestBody, feedSeq: row.feedSeq)
            }, tx)
        case .saveBody(let taskId, let body):
            try tx.run("""
                INSERT INTO task_bodies (task_id, body) VALUES ($1, $2)
                ON CONFLICT (task_id) DO UPDATE SET body = excluded.body
                """, taskId, body)
        case .saveMetrics(let taskId, let metrics):
            try tx.run("""
                INSERT INTO task_metrics (task_id, record) VALUES ($1, $2)
                ON CONFLICT (task_id) DO UPDATE SET record = excluded.record
                """, taskId, String(decoding: metrics.jsonData(), as: UTF8.self))
        case .appendEvent(let event):
            var row = EventRows()
            row.add(event)
            try insert(row.take(), tx)
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
            try raise("max_task_id", to: id, tx)
            try tx.run("DELETE FROM task_bodies WHERE task_id = $1", id)
            try tx.run("DELETE FROM task_metrics WHERE task_id = $1", id)
            try tx.run("DELETE FROM tasks WHERE id = $1", id)
        case .reserveTaskId(let id):
            try raise("max_task_id", to: id, tx)
        case .reserveFeedSeqs(let through):
            try raise("feed_seq_reserved", to: through, tx)
        case .cookies(let changes):
            for change in changes { try apply(change, tx) }
        }
    }

    /// Task rows in one statement: one array per column, unnested into rows (a batch of 10,000
    /// tasks was 10,000 round trips). One statement may not change a row twice, so of the rows of
    /// one task the newest version is written: what the version rule keeps when they are written
    /// one by one (of equal versions, the first), with the first one's request body, which is
    /// the one a first insert writes (the upsert never changes it).
    private static func write(_ rows: [TaskRowColumns], _ tx: PostgresConnection.Transaction) throws {
        guard !rows.isEmpty else { return }
        var kept: [TaskRowColumns] = []
        var index: [Int: Int] = [:]
        for row in rows {
            if let at = index[row.id] {
                if row.version > kept[at].version {
                    var newer = row
                    newer.requestBody = kept[at].requestBody
                    kept[at] = newer
                }
            } else {
                index[row.id] = kept.count
                kept.append(row)
            }
        }
        try tx.run(taskUpsert,
                   PostgresArrays.integers(kept.map(\.id)), PostgresArrays.texts(kept.map(\.sessionId)),
                   PostgresArrays.texts(kept.map(\.state)), PostgresArrays.texts(kept.map(\.record)),
                   PostgresArrays.byteas(kept.map(\.requestBody)), PostgresArrays.integers(kept.map(\.version)),
                   PostgresArrays.texts(kept.map(\.owner)), PostgresArrays.texts(kept.map(\.kind)),
                   PostgresArrays.texts(kept.map(\.schedulingClass)), PostgresArrays.integers(kept.map(\.heldBytes)),
                   PostgresArrays.doubles(kept.map(\.completedAt)), PostgresArrays.integers(kept.map(\.feedSeq)),
                   PostgresArrays.texts(kept.map(\.servedCut)))
    }

    private static let taskUpsert = TaskRowColumns.upsert(rows: """
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bigint[], $7::text[],
                             $8::text[], $9::text[], $10::bigint[], $11::double precision[], $12::bigint[], $13::text[])
        """)

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

    /// Raises a counter to at least `value` (ids and stamps handed out, never handed out again).
    private static func raise(_ name: String, to value: Int, _ tx: PostgresConnection.Transaction) throws {
        try tx.run("""
            INSERT INTO counters (name, value) VALUES ($1, $2)
            ON CONFLICT (name) DO UPDATE SET value = GREATEST(counters.value, excluded.value)
            """, name, value)
    }
}
