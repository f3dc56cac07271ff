import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService
internal import SQLite

/// Completed tasks leave memory once their completion is committed, and every read of them goes
/// to the store (issue 18): by id, a session's list, the change feed, body, metrics, progress,
/// PATCH, DELETE and retention answer as they did while the task was held; another tenant sees
/// none of it; a restart loads only unfinished tasks and still counts the rest.
@Suite struct StoredCompletedTasksTests {
    /// Runs a checkpoint (which lets go of committed completions) until memory holds `count` tasks.
    private static func letGo(_ service: TransferService, until count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while service.heldTaskCount != count {
            guard ContinuousClock.now < deadline else {
                Issue.record("memory still holds \(service.heldTaskCount) tasks, expected \(count)")
                return
            }
            service.checkpoint()
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Long-polls `owner`'s task until it completes.
    private static func completion(_ service: TransferService, _ id: Int, owner: String?) async throws {
        var version = 0
        for _ in 0..<50 {
            let snapshot: ProgressSnapshot = try await withCheckedThrowingContinuation { continuation in
                do {
                    try service.progress(task: id, after: version, wait: 1, owner: owner) { continuation.resume(returning: $0) }
                } catch { continuation.resume(throwing: error) }
            }
            if snapshot.state == .completed { return }
            version = snapshot.version
        }
        Issue.record("task \(id) did not complete")
    }

    private static func json(_ task: TransferTask) -> String { String(decoding: task.jsonData(), as: UTF8.self) }
    private static func json(_ task: ServedTask) -> String { String(decoding: task.jsonData, as: UTF8.self) }

    private static func changes(_ service: TransferService, after: Int, limit: Int = 100, owner: String?) async -> TaskChangePage {
        await withCheckedContinuation { continuation in
            service.taskChanges(after: after, limit: limit, wait: 0, owner: owner) { continuation.resume(returning: $0) }
        }
    }

    private static func create(_ service: TransferService, in session: String, _ path: String, owner: String?) throws -> TransferTask {
        try service.createTask(in: session, TaskCreate(request: RequestSpec(url: "http://origin.invalid/\(path)")), owner: owner)
    }

    @Test func aCompletedTaskLeavesMemoryAndIsServedAsItWasFromTheStore() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let service = harness.service
        let session = try service.createSession(SessionCreate(), owner: "alice").session.id
        let first = try Self.create(service, in: session, "one", owner: "alice")
        let second = try Self.create(service, in: session, "two", owner: "alice")
        let running = try Self.create(service, in: session, "three", owner: "alice")
        engine.succeed(first.id, body: Data("first body".utf8))
        engine.fail(second.id, .timedOut)
        try await Self.completion(service, first.id, owner: "alice")
        try await Self.completion(service, second.id, owner: "alice")
        let heldVersion = try service.task(first.id, owner: "alice").version
        let held = try [first.id, second.id].map { Self.json(try service.task($0, owner: "alice")) }
        let heldList = try service.listTasks(in: session, state: nil, owner: "alice", limit: 10, cursor: nil).items.map { Self.json($0) }
        let heldMetrics = try service.metrics(task: first.id, owner: "alice")

        try await Self.letGo(service, until: 1)

        #expect(try [first.id, second.id].map { Self.json(try service.task($0, owner: "alice")) } == held)
        #expect(try [first.id, second.id].map { Self.json(try service.servedTask($0, owner: "alice")) } == held)
        guard case .stored = try service.servedTask(first.id, owner: "alice") else { Issue.record("not served from the store"); return }
        // Pages serve the stored records cut by their notes, not decoded again; the records
        // leave their nulls out (`~`).
        let database = try Database(path: harness.folder.path + "/transferd.sqlite3")
        defer { database.close() }
        let cuts = try database.run("SELECT served_cut FROM tasks WHERE state = 'completed'").map { $0.string(0) ?? "" }
        #expect(cuts.count == 2 && cuts.allSatisfy { $0.hasPrefix(TransferTask.formId + "~:") }, "\(cuts)")
        let records = try database.run("SELECT record FROM tasks WHERE state = 'completed'").map { $0.string(0) ?? "" }
        #expect(records.count == 2 && records.allSatisfy { !$0.contains(":null") }, "\(records)")
        #expect(try service.listTasks(in: session, state: nil, owner: "alice", limit: 10, cursor: nil).items.map { Self.json($0) } == heldList)
        #expect(try service.listTasks(in: session, state: .completed, owner: "alice", limit: 10, cursor: nil).items.map(\.id) == [first.id, second.id])
        #expect(try service.listTasks(in: session, state: .running, owner: "alice", limit: 10, cursor: nil).items.map(\.id) == [running.id])
        // Pages of one: the stored and the held ones interleave by id.
        var ids: [Int] = []
        var cursor: String?
        repeat {
            let page = try service.listTasks(in: session, state: nil, owner: "alice", limit: 1, cursor: cursor)
            ids += page.items.map(\.id)
            cursor = page.next
        } while cursor != nil
        #expect(ids == [first.id, second.id, running.id])
        #expect(try service.body(task: first.id, owner: "alice").body == Data("first body".utf8))
        #expect(try service.metrics(task: first.id, owner: "alice").jsonData() == heldMetrics.jsonData())
        let snapshot: ProgressSnapshot = try await withCheckedThrowingContinuation { continuation in
            do {
                try service.progress(task: first.id, after: 1_000, wait: 5, owner: "alice") { continuation.resume(returning: $0) }
            } catch { continuation.resume(throwing: error) }
        }
        #expect(snapshot.state == .completed)
        #expect(throws: ServiceError.conflict(code: "task_completed", message: "task \(first.id) has completed")) {
            try service.resume(task: first.id, owner: "alice")
        }
        // A PATCH writes a new version of the stored row; the task stays out of memory.
        var update = try JSONDecoder().decode(TaskUpdate.self, from: Data(#"{"description": "kept"}"#.utf8))
        let patched = try service.update(task: first.id, update, owner: "alice")
        #expect(patched.description == "kept" && patched.version > heldVersion)
        #expect(try service.task(first.id, owner: "alice").description == "kept")
        #expect(service.heldTaskCount == 1)
        update = try JSONDecoder().decode(TaskUpdate.self, from: Data(#"{"priority": 0.9}"#.utf8))
        #expect(try service.update(task: second.id, update, owner: "alice").priority.value == 0.9)

        // The change feed lists the stored ones with the held one, each once, and then the PATCH.
        let all = await Self.changes(service, after: 0, owner: "alice")
        #expect(Set(all.tasks.map(\.id)) == [first.id, second.id, running.id] && all.tasks.count == 3)
        let paged1 = await Self.changes(service, after: 0, limit: 2, owner: "alice")
        let paged2 = await Self.changes(service, after: paged1.next, limit: 2, owner: "alice")
        #expect(Set((paged1.tasks + paged2.tasks).map(\.id)) == [first.id, second.id, running.id])
        #expect(paged1.tasks.count == 2)

        try service.deleteTask(second.id, owner: "alice")
        #expect(throws: ServiceError.notFound("no task \(second.id)")) { try service.task(second.id, owner: "alice") }
        #expect(throws: ServiceError.notFound("no task \(second.id)")) { try service.deleteTask(second.id, owner: "alice") }
        let afterDelete = await Self.changes(service, after: all.next, owner: "alice")
        #expect(afterDelete.removed == [second.id])
        #expect(try service.listTasks(in: session, state: nil, owner: "alice", limit: 10, cursor: nil).items.map(\.id) == [first.id, running.id])
    }

    @Test func anotherTenantFindsNoneOfAStoredTask() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let service = harness.service
        // The shared session holds both tenants' tasks.
        let mine = try Self.create(service, in: Session.sharedID, "alice", owner: "alice")
        let theirs = try Self.create(service, in: Session.sharedID, "bob", owner: "bob")
        engine.succeed(mine.id, body: Data("alice's".utf8))
        engine.succeed(theirs.id, body: Data("bob's".utf8))
        try await Self.completion(service, mine.id, owner: "alice")
        try await Self.completion(service, theirs.id, owner: "bob")
        try await Self.letGo(service, until: 0)

        for call in [{ _ = try service.task(mine.id, owner: "bob") },
                     { _ = try service.servedTask(mine.id, owner: "bob") },
                     { _ = try service.body(task: mine.id, owner: "bob") },
                     { _ = try service.metrics(task: mine.id, owner: "bob") },
                     { _ = try service.update(task: mine.id, try JSONDecoder().decode(TaskUpdate.self, from: Data(#"{"description": "x"}"#.utf8)), owner: "bob") },
                     { try service.deleteTask(mine.id, owner: "bob") }] as [() throws -> Void] {
            #expect(throws: ServiceError.notFound("no task \(mine.id)")) { try call() }
        }
        #expect(try service.listTasks(in: Session.sharedID, state: nil, owner: "bob", limit: 10, cursor: nil).items.map(\.id) == [theirs.id])
        #expect(await Self.changes(service, after: 0, owner: "bob").tasks.map(\.id) == [theirs.id])
        #expect(await Self.changes(service, after: 0, owner: nil).tasks.isEmpty)
        // Their events stay theirs after the tasks left memory.
        let bobsEvents: EventPage = try await withCheckedThrowingContinuation { continuation in
            do {
                try service.events(session: Session.sharedID, after: 0, limit: 1_000, wait: 0, owner: "bob") { continuation.resume(returning: $0) }
            } catch { continuation.resume(throwing: error) }
        }
        #expect(!bobsEvents.events.isEmpty && bobsEvents.events.allSatisfy { $0.taskId == theirs.id })
        // Bob's delete of his own does not touch Alice's.
        try service.deleteTask(theirs.id, owner: "bob")
        #expect(try service.task(mine.id, owner: "alice").id == mine.id)
    }

    @Test func aRestartLoadsOnlyUnfinishedTasksAndStillCountsTheRest() async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-stored")
        defer { folder.remove() }
        let configuration = ServiceConfiguration(dataDirectory: folder.path)
        let engine = FakeEngine()
        let first = try TransferService(configuration: configuration, engine: engine)
        first.start()
        let session = try first.createSession(SessionCreate(), owner: "alice").session.id
        let done = try Self.create(first, in: session, "done", owner: "alice")
        let queued = try first.createTask(in: session, TaskCreate(request: RequestSpec(url: "http://origin.invalid/later"), state: .suspended), owner: "alice")
        engine.succeed(done.id, body: Data(repeating: 7, count: 1_000))
        try await Self.completion(first, done.id, owner: "alice")
        let bytesBefore = try first.quotaUsage(owner: "alice").diskBytes
        #expect(bytesBefore == 1_000)
        let cursor = await Self.changes(first, after: 0, owner: "alice").next
        first.stop()

        let second = try TransferService(configuration: configuration, engine: FakeEngine())
        second.start()
        defer { second.stop() }
        #expect(second.heldTaskCount == 1)
        #expect(try second.task(queued.id, owner: "alice").state == .suspended)
        #expect(try second.task(done.id, owner: "alice").state == .completed)
        #expect(try second.quotaUsage(owner: "alice").diskBytes == bytesBefore)
        let metrics = String(decoding: second.renderMetrics(), as: UTF8.self)
        #expect(metrics.contains(#"state="completed""#), "\(metrics.split(separator: "\n").filter { $0.hasPrefix("transferd_tasks{") })")
        // A cursor of the previous run starts over; from 0 every task is there.
        #expect(await Self.changes(second, after: cursor, owner: "alice").resync)
        #expect(Set(await Self.changes(second, after: 0, owner: "alice").tasks.map(\.id)) == [done.id, queued.id])
        // Deleting the stored one gives its bytes back.
        try second.deleteTask(done.id, owner: "alice")
        #expect(try second.quotaUsage(owner: "alice").diskBytes == 0)
    }

    @Test func retentionDeletesStoredCompletedTasks() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.taskRetention = 3_600 }
        defer { harness.stop() }
        let service = harness.service
        let session = try harness.session()
        let task = try harness.task(in: session, "http://origin.invalid/old")
        engine.succeed(task.id, body: Data("old".utf8))
        _ = try await harness.completion(task.id)
        try await Self.letGo(service, until: 0)
        service.expireTasks(now: Date().addingTimeInterval(1_800))
        #expect(try service.task(task.id, owner: nil).id == task.id)
        service.expireTasks(now: Date().addingTimeInterval(7_200))
        #expect(throws: ServiceError.notFound("no task \(task.id)")) { try service.task(task.id, owner: nil) }
        #expect(await Self.changes(service, after: 0, owner: nil).tasks.isEmpty)
    }

    /// A DELETE whose commit fails stays queued, and so does its mark: a second DELETE finds no
    /// task (it would take the task's bytes off its tenant a second time), and once commits work
    /// again the row goes and the bytes are counted off once.
    @Test func aDeleteThatCannotCommitIsNotCountedTwice() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let service = harness.service
        let store = try #require(service.store as? Store)
        let session = try service.createSession(SessionCreate(), owner: "alice").session.id
        let done = try Self.create(service, in: session, "done", owner: "alice")
        let other = try Self.create(service, in: session, "other", owner: "alice")
        engine.succeed(done.id, body: Data(repeating: 1, count: 300))
        engine.succeed(other.id, body: Data(repeating: 2, count: 200))
        try await Self.completion(service, done.id, owner: "alice")
        try await Self.completion(service, other.id, owner: "alice")
        try await Self.letGo(service, until: 0)
        #expect(try service.quotaUsage(owner: "alice").diskBytes == 500)

        // A write that needs new pages shares the DELETE's transaction, and the file may not grow.
        store.flush()
        try StoreCommitFailureTests.cap(store)
        store.enqueue(.saveSession(StoreCommitFailureTests.bigSession("filler")))
        #expect(throws: StoreFailure.self) { try service.deleteTask(done.id, owner: "alice") }
        #expect(throws: ServiceError.notFound("no task \(done.id)")) { try service.deleteTask(done.id, owner: "alice") }
        service.checkpoint()  // while commits fail, the mark stays
        #expect(throws: ServiceError.notFound("no task \(done.id)")) { try service.deleteTask(done.id, owner: "alice") }
        #expect(try service.quotaUsage(owner: "alice").diskBytes == 200)

        try StoreCommitFailureTests.uncap(store)
        try store.commit()
        #expect(try store.storedTask(id: done.id) == nil)
        #expect(try service.quotaUsage(owner: "alice").diskBytes == 200)
        #expect(throws: ServiceError.notFound("no task \(done.id)")) { try service.task(done.id, owner: "alice") }
        try service.deleteTask(other.id, owner: "alice")
        #expect(try service.quotaUsage(owner: "alice").diskBytes == 0)
    }

    /// A database written before schema 9 gets the new columns and summary from its records.
    @Test func schemaNineFillsItsColumnsFromTheStoredRecords() throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-schema9")
        defer { folder.remove() }
        let path = folder.path + "/transferd.sqlite3"
        do {
            let database = try Database(path: path)
            defer { database.close() }
            for script in Schema.migrations.prefix(8) { try database.execute(script: script) }
            try database.run("PRAGMA user_version = 8")
            var completed = StoreTests.task(1, session: "s", version: 3, state: .completed)
            completed.owner = "alice"
            completed.progress.bytesReceived = 500
            completed.completedAt = Date(timeIntervalSince1970: 1_700_000_000)
            let running = StoreTests.task(2, session: "s", version: 1, state: .running)
            try database.run("INSERT INTO sessions(id, owner, identifier, record, version) VALUES('s', NULL, NULL, '{}', 1)")
            for task in [completed, running] {
                try database.run("INSERT INTO tasks(id, session_id, state, record, request_body, version) VALUES(?, 's', ?, ?, NULL, ?)",
                                 task.id, task.state.rawValue, Store.json(task), task.version)
            }
        }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        #expect(try store.loadUnfinishedTasks().map(\.0.id) == [2])
        #expect(try store.completedTaskSummary() == [CompletedTaskSummary(owner: "alice", kind: .data, schedulingClass: .default, tasks: 1, heldBytes: 500)])
        #expect(try store.completedChanges(after: 0, through: 10, owner: "alice", limit: 10).map(\.task.id) == [1])
        #expect(try store.completedChanges(after: 0, through: 10, owner: "bob", limit: 10).isEmpty)
        #expect(try store.tasksCompleted(before: Date(timeIntervalSince1970: 1_700_000_001), limit: 10).map(\.id) == [1])
        #expect(try store.tasksCompleted(before: Date(timeIntervalSince1970: 1_699_999_999), limit: 10).isEmpty)
        #expect(try store.feedSeqFloor() >= 2)
        // The triggers keep the summary as rows come and go.
        store.enqueue(.deleteTask(id: 1))
        store.flush()
        #expect(try store.completedTaskSummary().isEmpty)
    }
}
