public import FoundationEssentials
internal import SQLite
internal import Dispatch
internal import Synchronization
public import Logging
public import TransferModel

/// The SQLite database of one data folder: schema migrations, the queued writer, and the reads
/// used at start-up and for response bodies. Owned by `TransferService`.
///
/// Writes are queued (`enqueue`) and committed by one serial writer, many per transaction, so the
/// engine thread never waits on the disk. A write that cannot be committed stays queued and is
/// tried again; `commit()` tells the API whether what it queued is committed (`QueuedWriter`).
public final class Store: Sendable {
    /// The write connection: migrations, the writer's batches and the few rows written at once
    /// (`Store+Blobs`, `Store+Credentials`, `Store+URLCache`). Internal, not private, for those.
    let database: Database
    /// Every read (`reader`): never behind the writer's open transaction.
    let readers: ReadConnections
    /// The queued writes, committed on the write connection (`Store+Writes`).
    package let writer: QueuedWriter
    public let path: String
    let logger: Logger

    /// Opens (creating) `<dataDirectory>/transferd.sqlite3` in WAL mode and migrates it.
    public convenience init(dataDirectory: String) throws {
        try self.init(dataDirectory: dataDirectory, instruments: nil)
    }

    /// Opens the store, timing each batch commit into `instruments` and logging failures to `logger`.
    public init(dataDirectory: String, instruments: (any StoreInstruments)?, logger: Logger = Logger(label: "transferd.store")) throws {
        self.logger = logger
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        path = dataDirectory + "/transferd.sqlite3"
        try Self.restrictToOwner(databasePath: path)
        database = try Database(path: path)
        // WAL + NORMAL: a commit survives a process crash (kill -9); only an OS crash can lose
        // the last commits. Measured ~100k commits/s vs 6-10k with FULL (STYLE.md).
        try database.execute(script: "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
        readers = try ReadConnections(path: path, count: Self.readConnections)
        writer = QueuedWriter(target: SQLiteWrites(database: database), groupCommitWindow: Self.groupCommitWindow,
                              instruments: instruments, logger: logger)
        try migrate()
    }

    /// How long a background write (an engine update, an event, a progress checkpoint) waits for
    /// others to share its commit. Long enough that a small download's start and completion
    /// (3-5 ms apart on the 2-core machine) share one: its record is then encoded and upserted
    /// once instead of twice, in fewer, fuller commits (issue 18: daemon CPU per 16 KiB file
    /// 514-525 -> 431-504 µs against 2 ms, three alternating pairs). Short enough that a
    /// long-poll, which answers once what it serves is committed (`afterCommit`), is not kept
    /// noticeably. An API write never waits for it (`commit()`, `settle`). The cluster's
    /// PostgreSQL store keeps 2 ms: a node claims freed slots after the commit that frees them.
    static let groupCommitWindow: Duration = .milliseconds(10)

    /// Reads at once: the HTTP workers' body and metrics reads, and start-up loads.
    static let readConnections = 2

    /// The connection for one read.
    var reader: Database { readers.next }

    private func migrate() throws {
        let current = try database.run("PRAGMA user_version").first?.int(0) ?? 0
        guard current < Schema.migrations.count else { return }
        try database.transaction { tx in
            // Whole scripts: a trigger's body holds semicolons of its own.
            for (index, script) in Schema.migrations.enumerated() where index >= current {
                try tx.execute(script: script)
            }
            try tx.run("PRAGMA user_version = \(Schema.migrations.count)")
        }
    }

    /// The schema version the database is at.
    public var schemaVersion: Int { (try? reader.run("PRAGMA user_version").first?.int(0)) ?? 0 }

    /// Writes a batch's operations in order inside the writer's transaction (`SQLiteWrites`),
    /// its events gathered into a row per session and owner (`EventRows`), written before any
    /// operation that deletes events and at the end.
    static func apply(_ operations: some Sequence<StoreOperation>, _ tx: Database.Transaction) throws {
        var events = EventRows()
        for operation in operations {
            switch operation {
            case .appendEvent(let event):
                events.add(event)
            case .pruneEvents, .deleteEvents:
                try events.write(tx)
                try apply(operation, tx)
            default:
                try apply(operation, tx)
            }
        }
        try events.write(tx)
    }

    /// Writes one operation inside the writer's transaction.
    static func apply(_ operation: StoreOperation, _ tx: Database.Transaction) throws {
        switch operation {
        case .saveSession(let session):
            // An invalidated session gives its identifier up (unique index), so a new background
            // session may take it; the record keeps it for display.
            let identifier = session.state == .invalidated ? nil : session.identifier
            try tx.run("""
                INSERT INTO sessions(id, owner, identifier, record, version) VALUES(?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET identifier = excluded.identifier, record = excluded.record, version = excluded.version
                WHERE excluded.version > sessions.version
                """, session.id, session.owner, identifier, try Self.json(session), session.version)
        case .saveTask(let task, let body, let feedSeq, _):
            try save(task, requestBody: body, feedSeq: feedSeq, tx)
        case .saveTasks(let rows):
            for (row, record) in zip(rows, Self.records(of: rows)) {
                try save(row.task, record: record, requestBody: row.requestBody, feedSeq: row.feedSeq, tx)
            }
        case .saveBody(let taskId, let body):
            try tx.run("INSERT OR REPLACE INTO task_bodies(task_id, body) VALUES(?, ?)", taskId, body)
        case .saveMetrics(let taskId, let metrics):
            let record = String(decoding: metrics.storedJSONData(), as: UTF8.self)
            try tx.run("INSERT OR REPLACE INTO task_metrics(task_id, record) VALUES(?, ?)", taskId, record)
        case .appendEvent(let event):
            var row = EventRows()
            row.add(event)
            try row.write(tx)
        case .pruneEvents(let sessionId, let oldestKept):
            try tx.run("DELETE FROM events WHERE session_id = ? AND seq < ?", sessionId, oldestKept)
        case .deleteEvents(let sessionId, let seq):
            try tx.run("DELETE FROM events WHERE session_id = ? AND seq <= ?", sessionId, seq)
        case .saveWebhookSecret(let sessionId, let secret):
            try tx.run("INSERT OR REPLACE INTO webhook_secrets(session_id, secret) VALUES(?, ?)", sessionId, secret)
        case .deleteTask(let id):
            try reserve(taskId: id, tx)
            try tx.run("DELETE FROM task_bodies WHERE task_id = ?", id)
            try tx.run("DELETE FROM task_metrics WHERE task_id = ?", id)
            try tx.run("DELETE FROM tasks WHERE id = ?", id)
        case .reserveTaskId(let id):
            try reserve(taskId: id, tx)
        case .reserveFeedSeqs(let through):
            try tx.run("""
                INSERT INTO counters(name, value) VALUES('feed_seq_reserved', ?)
                ON CONFLICT(name) DO UPDATE SET value = MAX(value, excluded.value)
                """, through)
        case .cookies(let changes):
            try apply(changes, tx)
        case .saveSetting(let name, let json):
            try tx.run("INSERT OR REPLACE INTO settings(name, value) VALUES(?, ?)", name, json)
        }
    }

    /// Writes `task` with its stored form (`record`, `record(task)` when not given) and the
    /// columns completed tasks are found and served by (schema migration 9).
    private static func save(_ task: TransferTask, record: StoredRecord? = nil, requestBody body: Data?, feedSeq: Int, _ tx: Database.Transaction) throws {
        let c = TaskRowColumns(task, record: record ?? Self.record(task), requestBody: body, feedSeq: feedSeq)
        try tx.run(Self.taskUpsert, c.id, c.sessionId, c.state, c.record, c.requestBody, c.version, c.owner, c.kind,
                   c.schedulingClass, c.heldBytes, c.completedAt, c.feedSeq, c.servedCut)
    }

    private static let taskUpsert = TaskRowColumns.upsert { _ in "?" }

    private static func reserve(taskId id: Int, _ tx: Database.Transaction) throws {
        try tx.run("""
            INSERT INTO counters(name, value) VALUES('max_task_id', ?)
            ON CONFLICT(name) DO UPDATE SET value = MAX(value, excluded.value)
            """, id)
    }

    // MARK: reading

    /// The owner is kept in its own column, so the record is the served JSON, plus the secrets
    /// the API never serves (proxy passwords).
    package static func json(_ session: Session) throws -> String {
        String(decoding: try JSONCoding.recordEncoder.encode(session), as: UTF8.self)
    }

    /// The stored form (the served fields plus the owner, resume state and streamed body),
    /// written by `TaskJSONWriter`: the same bytes as JSONCoding.encoder, several times faster.
    static func json(_ task: TransferTask) -> String { record(task).json }

    /// A task's stored form and the note that cuts its served form out (`servedCut`).
    package struct StoredRecord: Sendable {
        package let json: String
        package let servedCut: String
    }

    package static func record(_ task: TransferTask) -> StoredRecord {
        let (json, cut) = task.storedRecord()
        return StoredRecord(json: String(decoding: json, as: UTF8.self), servedCut: cut)
    }

    /// Written by `TaskJSONWriter`: the same bytes as JSONCoding.encoder, several times faster.
    /// Every stored session, in creation order (an upsert keeps a row's rowid).
    package func loadSessions() throws -> [Session] {
        try reader.run("SELECT \(StoredRows.sessionColumns) FROM sessions ORDER BY rowid").map(StoredRows.session)
    }

    /// Every stored task, with its request body.
    package func loadTasks() throws -> [(TransferTask, Data?)] {
        try reader.run("SELECT record, request_body FROM tasks ORDER BY id").map { row in
            (try StoredRows.task(from: row.data(0)), row.data(1))
        }
    }

    /// The newest `limit` events of every session, oldest first.
    /// Per stored session, the newest `limit` rows from its index (a row holds one event or
    /// more, `EventRows`): a start reads what it keeps, not every stored event (a window over the
    /// whole table did).
    package func loadRecentEvents(limit: Int) throws -> [TaskEvent] {
        var events: [TaskEvent] = []
        // The sessions that have events, one index probe each (a skip-scan of events_by_session).
        let sessions = try reader.run("""
            WITH RECURSIVE s(id) AS (
                SELECT MIN(session_id) FROM events
                UNION ALL SELECT (SELECT MIN(session_id) FROM events WHERE session_id > s.id) FROM s WHERE s.id IS NOT NULL
            ) SELECT id FROM s WHERE id IS NOT NULL
            """).compactMap { $0.string(0) }
        for session in sessions {
            let rows = try reader.run("SELECT record, owner FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT ?", session, limit)
            events += try StoredRows.newestEvents(rows, limit: limit)
        }
        return events.sorted { $0.seq < $1.seq }
    }

    /// The highest task id ever given, deleted tasks included.
    package func maxTaskId() throws -> Int {
        try reader.run("""
            SELECT MAX(COALESCE((SELECT MAX(id) FROM tasks), 0), COALESCE((SELECT value FROM counters WHERE name = 'max_task_id'), 0))
            """).first?.int(0) ?? 0
    }

    /// The highest event sequence number ever stored.
    package func maxEventSeq() throws -> Int { try reader.run("SELECT COALESCE(MAX(seq), 0) FROM events").first?.int(0) ?? 0 }

    /// A completed task's response body, once committed (callers `flush()` first).
    public func body(taskId: Int) throws -> Data? {
        try reader.run("SELECT body FROM task_bodies WHERE task_id = ?", taskId).first?.data(0)
    }

    /// A completed task's metrics, once committed (callers `flush()` first).
    public func metrics(taskId: Int) throws -> TaskMetrics? {
        guard let record = try reader.run("SELECT record FROM task_metrics WHERE task_id = ?", taskId).first?.data(0) else { return nil }
        return try JSONCoding.decoder.decode(TaskMetrics.self, from: record)
    }

    /// Commits what is pending and closes the database. Idempotent. Writes that still cannot be
    /// committed are lost with the process; the writer counts them in an error log line.
    public func close() {
        writer.close()
        readers.close()
        database.close()
    }
}
