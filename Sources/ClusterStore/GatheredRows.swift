internal import FoundationEssentials
internal import PostgreSQL
internal import TransferModel
internal import TransferStore

/// The rows of a commit that `PostgresWrites` writes as one statement per kind instead of one
/// per row (a batch of 10,000 tasks was 10,000 round trips): task rows, task metrics and event
/// rows, each kind as one array per column (`PostgresArrays`), unnested into rows.
struct GatheredRows {
    private var tasks: [TaskRowColumns] = []
    private var metrics: [(taskId: Int, record: String)] = []
    private var events = EventRows()

    /// Takes `operation` if it is of a gathered kind; false for any other.
    mutating func add(_ operation: StoreOperation) -> Bool {
        switch operation {
        case .saveTask(let task, let body, let feedSeq):
            tasks.append(TaskRowColumns(task, record: Store.record(task), requestBody: body, feedSeq: feedSeq))
        case .saveTasks(let rows):
            for (row, record) in zip(rows, Store.records(of: rows)) {
                tasks.append(TaskRowColumns(row.task, record: record, requestBody: row.requestBody, feedSeq: row.feedSeq))
            }
        case .saveMetrics(let taskId, let taskMetrics):
            metrics.append((taskId, String(decoding: taskMetrics.jsonData(), as: UTF8.self)))
        case .appendEvent(let event):
            events.add(event)
        default:
            return false
        }
        return true
    }

    /// Writes the gathered task rows, then the metrics (their foreign key), and starts over.
    ///
    /// One statement may not change a row twice, so of the rows of one task the newest version is
    /// written: what the version rule keeps when they are written one by one (of equal versions,
    /// the first), with the first one's request body, which is the one a first insert writes (the
    /// upsert never changes it). Of one task's metrics, the last, as row by row.
    mutating func writeTasksAndMetrics(_ tx: PostgresConnection.Transaction) throws {
        defer {
            tasks.removeAll()
            metrics.removeAll()
        }
        if !tasks.isEmpty {
            var kept: [TaskRowColumns] = []
            var index: [Int: Int] = [:]
            for row in tasks {
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
            try tx.run(Self.taskUpsert,
                       PostgresArrays.integers(kept.map(\.id)), PostgresArrays.texts(kept.map(\.sessionId)),
                       PostgresArrays.texts(kept.map(\.state)), PostgresArrays.texts(kept.map(\.record)),
                       PostgresArrays.byteas(kept.map(\.requestBody)), PostgresArrays.integers(kept.map(\.version)),
                       PostgresArrays.texts(kept.map(\.owner)), PostgresArrays.texts(kept.map(\.kind)),
                       PostgresArrays.texts(kept.map(\.schedulingClass)), PostgresArrays.integers(kept.map(\.heldBytes)),
                       PostgresArrays.doubles(kept.map(\.completedAt)), PostgresArrays.integers(kept.map(\.feedSeq)),
                       PostgresArrays.texts(kept.map(\.servedCut)))
        }
        if !metrics.isEmpty {
            var last: [Int: Int] = [:]
            for (index, entry) in metrics.enumerated() { last[entry.taskId] = index }
            let kept = metrics.indices.filter { last[metrics[$0].taskId] == $0 }.map { metrics[$0] }
            try tx.run("""
                INSERT INTO task_metrics (task_id, record) SELECT * FROM unnest($1::bigint[], $2::text[])
                ON CONFLICT (task_id) DO UPDATE SET record = excluded.record
                """, PostgresArrays.integers(kept.map(\.taskId)), PostgresArrays.texts(kept.map(\.record)))
        }
    }

    /// Writes the gathered events, a row per session and owner (`EventRows`; a row already there,
    /// from a retried commit, stays as it is), and starts over.
    mutating func writeEvents(_ tx: PostgresConnection.Transaction) throws {
        let rows = events.take()
        guard !rows.isEmpty else { return }
        try tx.run("""
            INSERT INTO events (seq, session_id, record, owner)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
            ON CONFLICT (seq) DO NOTHING
            """, PostgresArrays.integers(rows.map(\.seq)), PostgresArrays.texts(rows.map(\.session)),
            PostgresArrays.texts(rows.map(\.record)), PostgresArrays.texts(rows.map(\.owner)))
    }

    private static let taskUpsert = TaskRowColumns.upsert(rows: """
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bigint[], $7::text[],
                             $8::text[], $9::text[], $10::bigint[], $11::double precision[], $12::bigint[], $13::text[])
        """)
}
