import Foundation
import JSONModel
import Logging
import Testing
import TestSupport
@testable import ClusterStore
import PostgreSQL
@testable import TransferModel
@testable import TransferStore

/// The store's queued writer committing to PostgreSQL (`QueuedWriter` over `PostgresWrites`):
/// every kind of operation lands, a task or session never goes back to an older version, a
/// commit's events share rows, and a row the database refuses is dropped without the others.
@Suite struct PostgresWritesTests {
    private static func task(_ id: Int, version: Int, state: TaskState) -> TransferTask {
        let request = RequestInfo(url: "http://127.0.0.1/\(id)", method: "GET", headers: [:], bodyLength: nil,
                                  cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60, networkServiceType: .default)
        var task = TransferTask(id: id, sessionId: "s", kind: .data, state: state, priority: .default, description: "version \(version)",
                                request: request, owner: "tenant-\(id % 2)", now: Date(timeIntervalSince1970: 1_800_000_000))
        task.version = version
        return task
    }

    private static func writer(_ db: PostgresConnection) -> QueuedWriter {
        QueuedWriter(target: PostgresWrites(database: db), instruments: nil, logger: Logger(label: "test"))
    }

    @Test func everyOperationLandsAndNothingGoesBackToAnOlderVersion() throws {
        try ScratchDatabase.migrated { _, db in
            let writer = Self.writer(db)
            defer { writer.close() }
            var session = Session(id: "s", kind: .background, state: .active, configuration: SessionConfiguration(),
                                  createdAt: Date(timeIntervalSince1970: 1_800_000_000), version: 2)
            session.identifier = "com.example.cluster"
            writer.enqueue([
                .saveSession(session),
                .saveTasks([.init(task: Self.task(1, version: 1, state: .running), requestBody: Data([1, 2, 3]), feedSeq: 1),
                            .init(task: Self.task(2, version: 1, state: .suspended), feedSeq: 2)]),
            ])
            try writer.commit()
            var older = session
            older.version = 1
            older.identifier = "older"
            writer.enqueue([
                .saveTask(Self.task(1, version: 3, state: .completed), requestBody: nil, feedSeq: 5),
                .saveSession(older),  // older: kept out
                .saveBody(taskId: 1, body: Data("the body".utf8)),
                .saveWebhookSecret(sessionId: "s", secret: "whsec"),
                .reserveTaskId(50),
                .cookies([.save(owner: "tenant-1", Cookie(name: "a", value: "1", domain: "127.0.0.1", path: "/", isHostOnly: true,
                                                        expiresDate: nil, isSecure: false, isHTTPOnly: true, sameSitePolicy: nil,
                                                        createdAt: Date(timeIntervalSince1970: 1_800_000_000)))]),
            ] + (1...6).map { seq in
                var event = TaskEvent(seq: seq, sessionId: seq == 6 ? "other" : "s", taskId: 1, type: .didReceiveData,
                                      time: Date(timeIntervalSince1970: 1_800_000_000), fields: ["n": .integer(Int64(seq))])
                event.owner = seq <= 2 || seq == 5 ? "tenant-1" : "tenant-0"
                return .appendEvent(event)
            })
            try writer.commit()
            // An older version in a later commit (another node's late write): kept out too.
            writer.enqueue(.saveTask(Self.task(1, version: 2, state: .running), requestBody: nil, feedSeq: 4))
            try writer.commit()

            let tasks = try db.run("SELECT id, state, version, owner, request_body, feed_seq FROM tasks ORDER BY id")
            #expect(tasks.map { $0.values } == [
                [.integer(1), .text("completed"), .integer(3), .text("tenant-1"), .bytes(Data([1, 2, 3])), .integer(5)],
                [.integer(2), .text("suspended"), .integer(1), .text("tenant-0"), .null, .integer(2)],
            ])
            #expect(try db.run("SELECT record FROM tasks WHERE id = 1").first?.string(0)?.contains("\"version\":3") == true)
            #expect(try db.run("SELECT identifier, version FROM sessions").first?.values == [.text("com.example.cluster"), .integer(2)])
            #expect(try db.run("SELECT body FROM task_bodies WHERE task_id = 1").first?.data(0) == Data("the body".utf8))
            #expect(try db.run("SELECT secret FROM webhook_secrets").first?.string(0) == "whsec")
            #expect(try db.run("SELECT value FROM counters WHERE name = 'max_task_id'").first?.int(0) == 50)
            #expect(try db.run("SELECT owner, value, http_only FROM cookies").first?.values == [.text("tenant-1"), .text("1"), .boolean(true)])
            // Six events of one commit, numbered per session as committed, in the order they came
            // whatever their tenant: a row per run of one owner's consecutive events in a session,
            // keyed by its newest. Session s: tenant-1's 1, 2, tenant-0's 3, 4, tenant-1's 5.
            #expect(try db.run("SELECT seq, session_id, owner FROM events ORDER BY session_id, seq").map(\.values) == [
                [.integer(1), .text("other"), .text("tenant-0")],
                [.integer(2), .text("s"), .text("tenant-1")],
                [.integer(4), .text("s"), .text("tenant-0")],
                [.integer(5), .text("s"), .text("tenant-1")],
            ])
            #expect(try db.run("SELECT session_id, seq FROM event_feeds ORDER BY session_id").map(\.values) == [
                [.text("other"), .integer(1)], [.text("s"), .integer(5)],
            ])
            #expect(writer.failure == nil)
        }
    }

    private static func metrics(redirects: Int) -> TaskMetrics {
        TaskMetrics(taskInterval: .init(start: MetricsDate(Date(timeIntervalSince1970: 1_800_000_000)), duration: 1), redirectCount: redirects,
                    transactionMetrics: [])
    }

    private static func event(_ seq: Int, session: String, owner: String?) -> StoreOperation {
        var event = TaskEvent(seq: seq, sessionId: session, taskId: 1, type: .didReceiveData,
                              time: Date(timeIntervalSince1970: 1_800_000_000), fields: [:])
        event.owner = owner
        return .appendEvent(event)
    }

    /// A commit's task rows go as one statement of arrays: every character and byte arrives as
    /// it was (quotes, backslashes, braces, commas, NUL bytes, non-ASCII), and of one task's rows
    /// in a commit the newest version is kept, as row by row; a body written after its task in the
    /// same commit finds the row; metrics (the last of a task's) and events go the same way, and
    /// a deletion after a task's row and metrics removes both.
    @Test func aCommitsTaskRowsGoAsOneStatementAndArriveExactly() throws {
        try ScratchDatabase.migrated { _, db in
            // Straight to PostgresWrites: the queued writer would coalesce the three rows of task 1.
            let writes = PostgresWrites(database: db)
            let awkward = #"a "quoted" \ back\slash, {brace} NULL é 🚀 A"#
            var first = Self.task(1, version: 1, state: .running)
            first.description = awkward
            var newest = Self.task(1, version: 3, state: .completed)
            newest.description = awkward
            let bytes = Data([0, 1, 0x5C, 0x22, 0x7B, 0x2C, 255])
            try writes.commit([
                .saveTask(first, requestBody: bytes, feedSeq: 1),
                .saveTask(newest, requestBody: nil, feedSeq: 3),
                .saveTask(Self.task(1, version: 2, state: .running), requestBody: nil, feedSeq: 2),  // older than 3: kept out
                .saveBody(taskId: 1, body: bytes),
                .saveTasks((2...4).map { .init(task: Self.task($0, version: 1, state: .suspended), requestBody: $0 == 3 ? Data() : nil, feedSeq: $0) }),
                .saveMetrics(taskId: 1, metrics: Self.metrics(redirects: 1)),
                .saveMetrics(taskId: 2, metrics: Self.metrics(redirects: 5)),
                .saveMetrics(taskId: 1, metrics: Self.metrics(redirects: 2)),  // the last of task 1's wins
                .saveMetrics(taskId: 5, metrics: Self.metrics(redirects: 9)),
                .saveTask(Self.task(5, version: 1, state: .completed), requestBody: nil, feedSeq: 5),
                .deleteTask(id: 5),  // after its row and metrics: both go
                Self.event(10, session: "s", owner: awkward), Self.event(11, session: "other", owner: nil),
            ])
            let rows = try db.run("SELECT id, version, state, feed_seq, request_body, completed_at FROM tasks ORDER BY id")
            #expect(rows.map { $0.values[0...3] } == [
                [.integer(1), .integer(3), .text("completed"), .integer(3)],
                [.integer(2), .integer(1), .text("suspended"), .integer(2)],
                [.integer(3), .integer(1), .text("suspended"), .integer(3)],
                [.integer(4), .integer(1), .text("suspended"), .integer(4)],
            ])
            // The newest version's columns, with the request body of the first insert (the upsert
            // never changes it, row by row either).
            #expect(rows.map { $0.values[4] } == [.bytes(bytes), .null, .bytes(Data()), .null])
            let record = try #require(try db.run("SELECT record FROM tasks WHERE id = 1").first?.string(0))
            let decoded = try JSONCoding.decoder.decode(TransferTask.self, from: Data(record.utf8))
            #expect(decoded.description == awkward && decoded.version == 3)
            #expect(try db.run("SELECT body FROM task_bodies WHERE task_id = 1").first?.data(0) == bytes)
            let metrics = try db.run("SELECT task_id, record FROM task_metrics ORDER BY task_id").map { row in
                [row.int(0) ?? 0, (try? JSONCoding.decoder.decode(TaskMetrics.self, from: row.data(1) ?? Data()))?.redirectCount ?? -1]
            }
            #expect(metrics == [[1, 2], [2, 5]])
            #expect(try db.run("SELECT count(*) FROM tasks WHERE id = 5").first?.int(0) == 0)
            #expect(try db.run("SELECT seq, session_id, owner FROM events ORDER BY session_id, seq").map(\.values) == [
                [.integer(1), .text("other"), .null], [.integer(1), .text("s"), .text(awkward)],
            ])
        }
    }

    @Test func aRowTheDatabaseRefusesIsDroppedAndTheRestCommits() throws {
        try ScratchDatabase.migrated { _, db in
            let writer = Self.writer(db)
            defer { writer.close() }
            writer.enqueue([
                .saveBody(taskId: 999, body: Data("no such task".utf8)),  // its foreign key refuses it
                .saveTasks([.init(task: Self.task(7, version: 1, state: .running), feedSeq: 1)]),
            ])
            try writer.commit()
            #expect(try db.run("SELECT id FROM tasks").compactMap { $0.int(0) } == [7])
            #expect(try db.run("SELECT count(*) FROM task_bodies").first?.int(0) == 0)
            #expect(writer.failure == nil)
        }
    }
}
