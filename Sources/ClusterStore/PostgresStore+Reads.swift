package import FoundationEssentials
internal import PostgreSQL
package import TransferModel
package import TransferStore

/// The `TaskStore` reads on PostgreSQL: the queries of the SQLite store (`Store`,
/// `Store+CompletedTasks`) in PostgreSQL's dialect, each on an index of `ClusterSchema`, and the
/// rows decoded by `StoredRows`. Scoped as SQLite's are: the feed reads only the requester's and
/// the anonymous rows, and the service checks every other answer's owner.
extension PostgresStore {
    package func loadSessions() throws -> [Session] {
        try read("SELECT \(StoredRows.sessionColumns) FROM sessions ORDER BY created").map(StoredRows.session)
    }

    package func loadTasks() throws -> [(TransferTask, Data?)] {
        try StoredRows.tasksWithBodies(read("SELECT record, request_body FROM tasks ORDER BY id"))
    }

    package func loadUnfinishedTasks() throws -> [(TransferTask, Data?)] {
        try StoredRows.tasksWithBodies(read("SELECT record, request_body FROM tasks WHERE state <> 'completed' ORDER BY id"))
    }

    package func storedTask(id: Int) throws -> (task: TransferTask, feedSeq: Int)? {
        guard let row = try read("SELECT record, feed_seq FROM tasks WHERE id = $1", id).first else { return nil }
        return (try StoredRows.task(from: row.data(0)), row.int(1) ?? 0)
    }

    package func storedTaskJSON(id: Int) throws -> StoredTaskJSON? {
        try read("SELECT \(StoredRows.servedColumns) FROM tasks WHERE id = $1", id).first.map(StoredRows.served)
    }

    package func completedTasks(session: String, after: Int, limit: Int) throws -> [StoredTaskJSON] {
        try read("""
            SELECT \(StoredRows.servedColumns) FROM tasks WHERE session_id = $1 AND id > $2 AND state = 'completed' ORDER BY id LIMIT $3
            """, session, after, limit).map(StoredRows.served)
    }

    package func completedChanges(after: Int, through: Int, owner: String?, limit: Int) throws -> [(seq: Int, task: StoredTaskJSON)] {
        guard through > after, limit > 0 else { return [] }
        let completed = "SELECT \(StoredRows.servedColumns), feed_seq FROM tasks WHERE feed_seq > $1 AND feed_seq <= $2 AND state = 'completed'"
        let rows: [PostgresRow]
        if let owner, !owner.isEmpty {
            // Two index ranges of tasks_completed_feed (the owner's, the anonymous), each cut at
            // `limit`, merged: never a sort of every matching row.
            rows = try read("""
                SELECT * FROM (
                    (\(completed) AND owner = $4 ORDER BY feed_seq LIMIT $3)
                    UNION ALL
                    (\(completed) AND owner = '' ORDER BY feed_seq LIMIT $3)
                ) merged ORDER BY feed_seq LIMIT $3
                """, after, through, limit, owner)
        } else {
            rows = try read("\(completed) AND owner = '' ORDER BY feed_seq LIMIT $3", after, through, limit)
        }
        return try rows.map { (seq: $0.int(6) ?? 0, task: try StoredRows.served($0)) }
    }

    package func tasksCompleted(before date: Date, limit: Int) throws -> [TransferTask] {
        try read("""
            SELECT record FROM tasks WHERE completed_at < $1 AND state = 'completed' ORDER BY completed_at LIMIT $2
            """, date.timeIntervalSince1970, limit).map { try StoredRows.task(from: $0.data(0)) }
    }

    /// Counted from the completed rows (read once at start). SQLite keeps a summary table by
    /// triggers; here every completion of the cluster would update the same few rows, a hot spot
    /// between nodes, so the count is made when asked (docs/cluster.md).
    package func completedTaskSummary() throws -> [CompletedTaskSummary] {
        try read("""
            SELECT owner, kind, scheduling_class, count(*), COALESCE(sum(held_bytes), 0)::bigint FROM tasks
            WHERE state = 'completed' GROUP BY owner, kind, scheduling_class
            """).compactMap(StoredRows.summary)
    }

    package func feedSeqFloor() throws -> Int {
        try read("""
            SELECT GREATEST(COALESCE((SELECT value FROM counters WHERE name = 'feed_seq_reserved'), 0),
                            COALESCE((SELECT MAX(id) FROM tasks), 0))
            """).first?.int(0) ?? 0
    }

    package func existingTaskIds(among ids: [Int]) throws -> Set<Int> {
        guard !ids.isEmpty else { return [] }
        // One array parameter: integers only, in PostgreSQL's array text form.
        let list = "{" + ids.map(String.init).joined(separator: ",") + "}"
        return Set(try read("SELECT id FROM tasks WHERE id = ANY($1::bigint[])", list).compactMap { $0.int(0) })
    }

    package func loadRecentEvents(limit: Int) throws -> [TaskEvent] {
        var events: [TaskEvent] = []
        for session in try read("SELECT DISTINCT session_id FROM events").compactMap({ $0.string(0) }) {
            let rows = try read("SELECT record, owner FROM events WHERE session_id = $1 ORDER BY seq DESC LIMIT $2", session, limit)
            events += try StoredRows.newestEvents(rows, limit: limit)
        }
        return events.sorted { $0.seq < $1.seq }
    }

    package func maxTaskId() throws -> Int {
        try read("""
            SELECT GREATEST(COALESCE((SELECT MAX(id) FROM tasks), 0), COALESCE((SELECT value FROM counters WHERE name = 'max_task_id'), 0))
            """).first?.int(0) ?? 0
    }

    package func maxEventSeq() throws -> Int {
        try read("SELECT COALESCE(MAX(seq), 0) FROM events").first?.int(0) ?? 0
    }

    package func body(taskId: Int) throws -> Data? {
        try read("SELECT body FROM task_bodies WHERE task_id = $1", taskId).first?.data(0)
    }

    package func metrics(taskId: Int) throws -> TaskMetrics? {
        guard let record = try read("SELECT record FROM task_metrics WHERE task_id = $1", taskId).first?.data(0) else { return nil }
        return try JSONCoding.decoder.decode(TaskMetrics.self, from: record)
    }

    package func loadCookies(now: Date) throws -> [String: [Cookie]] {
        try database.run("DELETE FROM cookies WHERE expires <= $1", now.timeIntervalSince1970)
        var jars: [String: [Cookie]] = [:]
        for row in try read("SELECT \(StoredRows.cookieColumns) FROM cookies") {
            let (owner, cookie) = StoredRows.cookie(row)
            jars[owner, default: []].append(cookie)
        }
        return jars
    }

    package func loadWebhookSecrets() throws -> [String: String] {
        var secrets: [String: String] = [:]
        for row in try read("SELECT session_id, secret FROM webhook_secrets") {
            if let id = row.string(0), let secret = row.string(1) { secrets[id] = secret }
        }
        return secrets
    }

    package func setting(_ name: String) throws -> String? {
        try read("SELECT value FROM settings WHERE name = $1", name).first?.string(0)
    }
}
