internal import SQLite
package import FoundationEssentials
package import TransferModel

/// The reads that let the service keep only unfinished tasks in memory (issue 18): a completed
/// task of a recorded session leaves memory once its completion is committed, and from then on
/// it is read here, by id, by session, in the change feed's order, or by its completion time.
/// Each query walks an index (schema migration 9): what it costs grows with the size of the
/// answer and the logarithm of the table, never with the number of stored tasks.
///
/// Partitioning: the rows carry their owner ('' without tokens); the feed query reads only the
/// requester's rows and the anonymous ones, and the service checks every other answer with
/// `isVisible(to:)` before serving it, as it does for the tasks it holds.
extension Store {
    /// Every task that has not completed, with its request body, in id order (decoded on every
    /// core, `StoredRows.tasksWithBodies`).
    package func loadUnfinishedTasks() throws -> [(TransferTask, Data?)] {
        try StoredRows.tasksWithBodies(reader.run("SELECT record, request_body FROM tasks WHERE state != 'completed' ORDER BY id"))
    }

    /// One task by id (any state), with its feed stamp; nil when there is no such row.
    package func storedTask(id: Int) throws -> (task: TransferTask, feedSeq: Int)? {
        guard let row = try reader.run("SELECT record, feed_seq FROM tasks WHERE id = ?", id).first else { return nil }
        return (try StoredRows.task(from: row.data(0)), row.int(1) ?? 0)
    }

    /// One task's served JSON by id (any state); nil when there is no such row.
    package func storedTaskJSON(id: Int) throws -> StoredTaskJSON? {
        try reader.run("SELECT \(StoredRows.servedColumns) FROM tasks WHERE id = ?", id).first.map(StoredRows.served)
    }

    /// A session's completed tasks with ids above `after`, in id order, at most `limit`, as the
    /// served JSON of their records.
    package func completedTasks(session: String, after: Int, limit: Int) throws -> [StoredTaskJSON] {
        try reader.run("""
            SELECT \(StoredRows.servedColumns) FROM tasks WHERE session_id = ? AND id > ? AND state = 'completed' ORDER BY id LIMIT ?
            """, session, after, limit).map(StoredRows.served)
    }

    /// Completed tasks whose last change has a feed stamp in `after+1...through`, oldest change
    /// first, at most `limit`: `owner`'s and the anonymous ones ('' alone for nil).
    package func completedChanges(after: Int, through: Int, owner: String?, limit: Int) throws -> [(seq: Int, task: StoredTaskJSON)] {
        guard through > after, limit > 0 else { return [] }
        let rows: [Row]
        if let owner, !owner.isEmpty {
            // Two index ranges, each cut at `limit`, merged: never a sort of every matching row.
            rows = try reader.run("""
                SELECT * FROM (
                    SELECT * FROM (SELECT \(StoredRows.servedColumns), feed_seq FROM tasks WHERE owner = ? AND feed_seq > ? AND feed_seq <= ? AND state = 'completed' ORDER BY feed_seq LIMIT ?)
                    UNION ALL
                    SELECT * FROM (SELECT \(StoredRows.servedColumns), feed_seq FROM tasks WHERE owner = '' AND feed_seq > ? AND feed_seq <= ? AND state = 'completed' ORDER BY feed_seq LIMIT ?)
                ) ORDER BY feed_seq LIMIT ?
                """, owner, after, through, limit, after, through, limit, limit)
        } else {
            rows = try reader.run("""
                SELECT \(StoredRows.servedColumns), feed_seq FROM tasks WHERE owner = '' AND feed_seq > ? AND feed_seq <= ? AND state = 'completed' ORDER BY feed_seq LIMIT ?
                """, after, through, limit)
        }
        return try rows.map { (seq: $0.int(6) ?? 0, task: try StoredRows.served($0)) }
    }

    /// Completed tasks that completed before `date`, oldest first, at most `limit`.
    package func tasksCompleted(before date: Date, limit: Int) throws -> [TransferTask] {
        try reader.run("""
            SELECT record FROM tasks WHERE completed_at < ? AND state = 'completed' ORDER BY completed_at LIMIT ?
            """, date.timeIntervalSince1970, limit).map { try StoredRows.task(from: $0.data(0)) }
    }

    /// The completed tasks per owner, kind and class, and the bytes they keep (kept by triggers).
    package func completedTaskSummary() throws -> [CompletedTaskSummary] {
        try reader.run("SELECT owner, kind, scheduling_class, tasks, held_bytes FROM completed_tasks WHERE tasks > 0").compactMap(StoredRows.summary)
    }

    /// Where the change feed's counter goes on after a start: above every stamp a previous run
    /// handed out (`reserveFeedSeqs`). Before the first reservation the stamps were the ids
    /// (migration 9), so the highest id bounds them.
    package func feedSeqFloor() throws -> Int {
        try reader.run("""
            SELECT MAX(COALESCE((SELECT value FROM counters WHERE name = 'feed_seq_reserved'), 0),
                       COALESCE((SELECT MAX(id) FROM tasks), 0))
            """).first?.int(0) ?? 0
    }

    /// Which of `ids` have a row.
    package func existingTaskIds(among ids: [Int]) throws -> Set<Int> {
        var found = Set<Int>()
        // A few hundred per statement: SQLite caps the number of bound parameters.
        var start = 0
        while start < ids.count {
            let part = Array(ids[start..<min(ids.count, start + 500)])
            let list = part.map(String.init).joined(separator: ",")  // integers only: nothing to escape
            for row in try reader.run("SELECT id FROM tasks WHERE id IN (\(list))") { if let id = row.int(0) { found.insert(id) } }
            start += part.count
        }
        return found
    }
}

/// What the completed tasks of one owner, kind and scheduling class add up to in the store.
package struct CompletedTaskSummary: Sendable, Equatable {
    package let owner: String?
    package let kind: TaskKind
    package let schedulingClass: SchedulingClass
    package let tasks: Int
    package let heldBytes: Int

    package init(owner: String?, kind: TaskKind, schedulingClass: SchedulingClass, tasks: Int, heldBytes: Int) {
        self.owner = owner
        self.kind = kind
        self.schedulingClass = schedulingClass
        self.tasks = tasks
        self.heldBytes = heldBytes
    }
}
