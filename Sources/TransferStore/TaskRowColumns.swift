package import FoundationEssentials
package import TransferModel

/// A task's row as every store writes it (SQLite's and the cluster's PostgreSQL one): the
/// columns derived from the task, and the upsert that keeps a row's newer version whichever
/// process writes last. One place, so the stores cannot drift apart on what a row holds or on
/// the version rule.
package struct TaskRowColumns {
    package let id: Int
    package let sessionId: String
    package let state: String
    package let record: String
    /// Written by the row's first insert only: the upsert never changes it.
    package var requestBody: Data?
    package let version: Int
    /// '' without tokens: the completed-task queries find rows by it.
    package let owner: String
    package let kind: String
    package let schedulingClass: String
    package let heldBytes: Int
    /// Seconds since 1970.
    package let completedAt: Double?
    /// The change feed's stamp: the daemon's own counter with SQLite; for a row a cluster
    /// places, the writer's transaction's (`GatheredRows.stamp`).
    package var feedSeq: Int
    package let servedCut: String

    package init(_ task: TransferTask, record: Store.StoredRecord, requestBody: Data?, feedSeq: Int) {
        id = task.id
        sessionId = task.sessionId
        state = task.state.rawValue
        self.record = record.json
        self.requestBody = requestBody
        version = task.version
        owner = task.owner ?? ""
        kind = task.kind.rawValue
        schedulingClass = task.schedulingClass.rawValue
        heldBytes = TenantUsage.heldBytes(of: task)
        completedAt = task.completedAt?.timeIntervalSince1970
        self.feedSeq = feedSeq
        servedCut = record.servedCut
    }

    /// The upsert, its thirteen parameters in the order of the fields above, each written by
    /// `placeholder(n)` (n from 1): `?` for SQLite, `$n` for PostgreSQL.
    package static func upsert(placeholder: (Int) -> String) -> String {
        upsert(rows: "VALUES (\((1...13).map(placeholder).joined(separator: ", ")))")
    }

    /// The upsert of the rows `rows` gives (a VALUES list, or a SELECT of the thirteen columns in
    /// the order of the fields above, such as PostgreSQL's unnest of one array per column).
    package static func upsert(rows: String) -> String {
        """
        INSERT INTO tasks (id, session_id, state, record, request_body, version, owner, kind, scheduling_class, held_bytes, completed_at, feed_seq, served_cut)
        \(rows)
        ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record, version = excluded.version,
            kind = excluded.kind, scheduling_class = excluded.scheduling_class, held_bytes = excluded.held_bytes,
            completed_at = excluded.completed_at, feed_seq = excluded.feed_seq, served_cut = excluded.served_cut
        WHERE excluded.version > tasks.version
        """
    }
}
