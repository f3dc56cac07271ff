import Foundation
import SQLite
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService
internal import JSONModel

/// `Store` on a fresh temporary folder per test: migrations, WAL, versioned writes, events, bodies.
@Suite struct StoreTests {
    static func session(_ id: String, version: Int = 1) -> Session {
        Session(id: id, kind: .default, state: .active, configuration: SessionConfiguration(), createdAt: Date(timeIntervalSince1970: 1_700_000_000), version: version)
    }

    static func task(_ id: Int, session: String, version: Int, state: TaskState) -> TransferTask {
        let request = RequestInfo(url: "http://h/\(id)", method: "GET", headers: [:], bodyLength: nil, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60, networkServiceType: .default)
        var task = TransferTask(id: id, sessionId: session, kind: .data, state: state, priority: .default, description: "v\(version)", request: request, owner: "owner-\(id)", now: Date(timeIntervalSince1970: 1_700_000_000))
        task.version = version
        return task
    }

    static func event(_ seq: Int, session: String) -> TaskEvent {
        TaskEvent(seq: seq, sessionId: session, taskId: nil, type: .didReceiveData, time: Date(timeIntervalSince1970: 1_700_000_000 + Double(seq)), fields: ["bytesReceived": .integer(Int64(seq))])
    }

    @Test func newFileIsMigratedToTheCurrentSchemaInWALMode() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path + "/nested/data")
        #expect(store.path == folder.path + "/nested/data/transferd.sqlite3")
        #expect(store.schemaVersion == Schema.migrations.count)
        #expect(store.schemaVersion >= 1)
        store.close()

        // A second connection sees what the first left in the file.
        let database = try Database(path: folder.path + "/nested/data/transferd.sqlite3")
        defer { database.close() }
        #expect(try database.run("PRAGMA journal_mode").first?.string(0) == "wal")
        #expect(try database.run("PRAGMA user_version").first?.int(0) == Schema.migrations.count)
        let tables = try database.run("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0.string(0) }
        #expect(tables == ["blobs", "completed_tasks", "cookies", "counters", "credentials", "events", "sessions", "settings", "task_bodies", "task_metrics", "tasks", "url_cache", "webhook_secrets"])
    }

    @Test func reopeningIsIdempotentAndKeepsData() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let first = try Store(dataDirectory: folder.path)
        first.enqueue(.saveSession(Self.session("s1")))
        first.enqueue(.saveTask(Self.task(1, session: "s1", version: 2, state: .completed), requestBody: Data("req".utf8)))
        first.close()

        for _ in 0..<2 {
            let again = try Store(dataDirectory: folder.path)
            #expect(again.schemaVersion == Schema.migrations.count)
            #expect(try again.loadSessions().map(\.id) == ["s1"])
            let tasks = try again.loadTasks()
            #expect(tasks.count == 1)
            #expect(tasks.first?.0.version == 2)
            #expect(tasks.first?.1 == Data("req".utf8))
            again.close()
        }
    }

    @Test func aLowerVersionNeverOverwritesAHigherOne() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        store.enqueue(.saveSession(Self.session("s")))
        // Separately committed: v3, then a late v2.
        store.enqueue(.saveTask(Self.task(1, session: "s", version: 3, state: .completed), requestBody: nil))
        store.flush()
        store.enqueue(.saveTask(Self.task(1, session: "s", version: 2, state: .running), requestBody: nil))
        store.flush()
        // In one batch, in the wrong order.
        store.enqueue([
            .saveTask(Self.task(2, session: "s", version: 5, state: .completed), requestBody: nil),
            .saveTask(Self.task(2, session: "s", version: 4, state: .running), requestBody: nil),
            .saveTask(Self.task(2, session: "s", version: 1, state: .suspended), requestBody: nil),
        ])
        // An equal version is not a change either.
        store.enqueue(.saveTask(Self.task(3, session: "s", version: 7, state: .completed), requestBody: nil))
        var same = Self.task(3, session: "s", version: 7, state: .running)
        same.description = "late duplicate"
        store.enqueue(.saveTask(same, requestBody: nil))
        store.flush()

        let tasks = Dictionary(uniqueKeysWithValues: try store.loadTasks().map { ($0.0.id, $0.0) })
        #expect(tasks[1]?.version == 3)
        #expect(tasks[1]?.state == .completed)
        #expect(tasks[1]?.description == "v3")
        #expect(tasks[2]?.version == 5)
        #expect(tasks[2]?.state == .completed)
        #expect(tasks[3]?.description == "v7")
        #expect(tasks[3]?.state == .completed)

        // A higher version does replace it, and the owner survives the round trip.
        store.enqueue(.saveTask(Self.task(1, session: "s", version: 4, state: .running), requestBody: nil))
        store.flush()
        let reloaded = try store.loadTasks().first { $0.0.id == 1 }?.0
        #expect(reloaded?.version == 4)
        #expect(reloaded?.state == .running)
        #expect(reloaded?.owner == "owner-1")
    }

    @Test func sessionVersionsAreGuardedToo() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        var newer = Self.session("s", version: 3)
        newer.state = .invalidated
        var older = Self.session("s", version: 2)
        older.state = .invalidating
        store.enqueue([.saveSession(newer), .saveSession(older)])
        store.flush()
        let sessions = try store.loadSessions()
        #expect(sessions.count == 1)
        #expect(sessions.first?.state == .invalidated)
        #expect(sessions.first?.version == 3)
    }

    @Test func pruningKeepsTheNewestEventsOfThatSessionOnly() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        // Three commits of session a's events: three rows (`EventRows`), up to 10, 15 and 20.
        for range in [1...10, 11...15, 16...20] {
            store.enqueue(range.map { .appendEvent(Self.event($0, session: "a")) })
            store.flush()
        }
        store.enqueue((21...25).map { .appendEvent(Self.event($0, session: "b")) })
        store.enqueue(.pruneEvents(sessionId: "a", oldestKept: 16))
        store.enqueue(.pruneEvents(sessionId: "b", oldestKept: 21))  // the oldest: nothing goes
        store.flush()

        let all = try store.loadRecentEvents(limit: 1_000)
        #expect(all.filter { $0.sessionId == "a" }.map(\.seq) == Array(16...20))
        #expect(all.filter { $0.sessionId == "b" }.map(\.seq) == Array(21...25))
        #expect(all.map(\.seq) == all.map(\.seq).sorted())
        #expect(all.first?.fields["bytesReceived"] == .integer(16))
        // The newest `limit` per session, oldest first, also out of a row that holds more.
        #expect(try store.loadRecentEvents(limit: 3).map(\.seq) == [18, 19, 20, 23, 24, 25])
        // The sequence keeps counting from the highest ever stored.
        #expect(try store.maxEventSeq() == 25)
        // A row that straddles the oldest kept stays whole; a start keeps the newest `limit`.
        store.enqueue(.pruneEvents(sessionId: "a", oldestKept: 18))
        store.enqueue(.pruneEvents(sessionId: "b", oldestKept: 26))
        store.flush()
        #expect(try store.loadRecentEvents(limit: 1_000).map(\.seq) == Array(16...20))
        #expect(try store.loadRecentEvents(limit: 2).map(\.seq) == [19, 20])
        #expect(try store.maxEventSeq() == 20)
    }

    @Test func theEventsOfOneCommitShareARowPerSessionAndOwner() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        // Interleaved as a shared session's tenants and another session make them.
        let owners: [String?] = [nil, "t1", "t2"]
        var operations: [StoreOperation] = []
        for seq in 1...30 {
            var event = Self.event(seq, session: seq % 5 == 0 ? "other" : "shared")
            event.owner = owners[seq % 3]
            operations.append(.appendEvent(event))
        }
        store.enqueue(operations)
        store.flush()

        let database = try Database(path: store.path)
        let rows = try database.run("SELECT session_id, owner FROM events")
        #expect(rows.count == 6)  // two sessions times three owners
        let loaded = try store.loadRecentEvents(limit: 1_000)
        #expect(loaded.map(\.seq) == Array(1...30))
        for event in loaded {
            #expect(event.owner == owners[event.seq % 3])
            #expect(event.sessionId == (event.seq % 5 == 0 ? "other" : "shared"))
            #expect(event.fields["bytesReceived"] == .integer(Int64(event.seq)))
        }
        // An acknowledgement deletes whole rows up to its seq: each row's key is its newest.
        store.enqueue(.deleteEvents(sessionId: "shared", through: 29))
        store.flush()
        #expect(try store.loadRecentEvents(limit: 1_000).filter { $0.sessionId == "shared" }.map(\.seq).isEmpty)
        #expect(try store.loadRecentEvents(limit: 1_000).filter { $0.sessionId == "other" }.count == 6)
        #expect(try store.maxEventSeq() == 30)
    }

    @Test(arguments: [0, 1, 4_096, 3 << 20])
    func bodyRoundTrip(size: Int) throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        var generator = SystemRandomNumberGenerator()
        let body = Data(count: size) { _ in UInt8.random(in: 0...255, using: &generator) }
        let store = try Store(dataDirectory: folder.path)
        store.enqueue(.saveSession(Self.session("s")))
        store.enqueue(.saveTask(Self.task(1, session: "s", version: 1, state: .completed), requestBody: Data()))
        store.enqueue(.saveBody(taskId: 1, body: body))
        store.flush()
        let stored = try #require(try store.body(taskId: 1))
        #expect(stored == body)
        #expect(try store.body(taskId: 2) == nil)
        store.close()

        let reopened = try Store(dataDirectory: folder.path)
        defer { reopened.close() }
        #expect(try reopened.body(taskId: 1) == body)
        // An empty request body is stored as an empty blob, not as NULL.
        #expect(try reopened.loadTasks().first?.1 == Data())
    }

    @Test func closeCommitsWhatIsPending() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        store.enqueue(.saveSession(Self.session("s")))
        store.enqueue(.saveTask(Self.task(9, session: "s", version: 1, state: .suspended), requestBody: nil))
        store.close()
        store.close()  // idempotent
        let reopened = try Store(dataDirectory: folder.path)
        defer { reopened.close() }
        #expect(try reopened.loadTasks().map(\.0.id) == [9])
        #expect(try reopened.loadTasks().first?.1 == nil)
    }
}
