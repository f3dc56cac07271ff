import Foundation
import Prometheus
import SQLite
import Synchronization
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The store's writer when commits fail, without a filesystem trick: `PRAGMA max_page_count`
/// caps the database at its current size, and SQLite then refuses a write that needs a new page
/// with SQLITE_FULL, as it does on a full disk.
@Suite struct StoreCommitFailureTests {
    /// A session whose record needs new pages: a description longer than a page spills into
    /// overflow pages.
    static func bigSession(_ id: String) -> Session {
        var session = StoreTests.session(id)
        session.description = String(repeating: "x", count: 3 * 4096) + id
        return session
    }

    static func cap(_ store: Store) throws {
        let pages = try #require(try store.database.run("PRAGMA page_count").first?.int(0))
        try store.database.execute(script: "PRAGMA max_page_count = \(pages)")
    }

    static func uncap(_ store: Store) throws {
        try store.database.execute(script: "PRAGMA max_page_count = 1073741823")
    }

    /// Reads the pending writes on the writer's queue: a drain scheduled before a failure (the
    /// group commit of an earlier enqueue) may be running, and between taking the writes and
    /// committing or putting them back it holds them, so a read beside it sees neither.
    static func pending<T>(_ store: Store, _ body: (PendingWrites) throws -> T) rethrows -> T {
        try store.writer.queue.sync { try store.writer.writes.withLock { try body($0) } }
    }

    static func failures(_ metrics: TransferMetrics, _ reason: String = "disk_full") -> Double? {
        let text = String(decoding: metrics.registry.emitToBuffer(), as: UTF8.self)
        let prefix = "transferd_store_commit_failures_total{reason=\"\(reason)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }

    @Test func aFailedBatchStaysPendingAndCommitsOnceSpaceReturns() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let metrics = TransferMetrics()
        let store = try Store(dataDirectory: folder.path, instruments: metrics)
        defer { store.close() }
        #expect(Self.failures(metrics) == 0)
        store.enqueue(.saveSession(StoreTests.session("s0")))
        try store.commit()
        try Self.cap(store)

        for index in 0..<20 { store.enqueue(.saveSession(Self.bigSession("s\(index + 1)"))) }
        #expect(throws: StoreFailure.self) { try store.commit() }
        #expect(store.failure?.kind == .diskFull)
        #expect((Self.failures(metrics) ?? 0) >= 1)
        // Nothing of the failed batch went in, and nothing was dropped: it is all still queued.
        #expect(try store.loadSessions().map(\.id) == ["s0"])
        #expect(Self.pending(store) { $0.items.count } == 20)

        try Self.uncap(store)
        try store.commit()
        #expect(store.failure == nil)
        #expect(try store.loadSessions().count == 21)
    }

    @Test func theWriterRetriesOnItsOwnAndReadinessComesBack() async throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path, instruments: TransferMetrics())
        defer { store.close() }
        store.flush()
        try Self.cap(store)
        store.enqueue(.saveSession(Self.bigSession("background")))
        store.flush()
        #expect(store.failure?.kind == .diskFull)
        try Self.uncap(store)
        // No request comes: the retry (every second) commits the pending write by itself.
        let deadline = ContinuousClock.now + .seconds(10)
        while store.failure != nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(store.failure == nil)
        #expect(try store.loadSessions().map(\.id) == ["background"])
    }

    @Test func aRefusedCreationIsWithdrawnAndNeverCommitsLater() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path, instruments: TransferMetrics())
        defer { store.close() }
        store.enqueue(.saveSession(StoreTests.session("kept")))
        try store.commit()
        try Self.cap(store)

        // One call, so one batch: the background write fails with the creation.
        let seq = try #require(store.enqueue([
            .saveTask(StoreTests.task(1, session: "kept", version: 2, state: .running), requestBody: nil),
            .saveSession(Self.bigSession("refused")), .saveWebhookSecret(sessionId: "refused", secret: "s"),
        ]))
        let background = seq - 2
        let failure = store.settle(seq) { failure -> StoreFailure? in
            if failure != nil { store.withdraw { $0.without(session: "refused", tasks: []) } }
            return failure
        }
        #expect(failure?.kind == .diskFull)
        // The background write is not withdrawn with the creation: it stays queued, or the group
        // commit scheduled when it was queued has committed it already (alone, it fits).
        let kept = try Self.pending(store) { try $0.contains(background) || store.loadTasks().map(\.0.id) == [1] }
        #expect(kept, "the background write was lost with the refused creation")

        try Self.uncap(store)
        try store.commit()
        #expect(try store.loadSessions().map(\.id) == ["kept"])
        #expect(try store.loadTasks().map(\.0.id) == [1])
        // A creation that commits settles with no failure.
        let ok = store.enqueue(.saveSession(StoreTests.session("later")))
        #expect(store.settle(ok) { $0 } == nil)
    }

    /// A row the database refuses whatever the disk does (here a task of a session that does not
    /// exist, against the foreign key) is dropped so it cannot hold the others back.
    @Test func aRejectedRowIsDroppedAndTheRestCommits() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let metrics = TransferMetrics()
        let store = try Store(dataDirectory: folder.path, instruments: metrics)
        defer { store.close() }
        store.enqueue([
            .saveSession(StoreTests.session("s")),
            .saveTask(StoreTests.task(1, session: "missing", version: 1, state: .running), requestBody: nil),
            .saveTask(StoreTests.task(2, session: "s", version: 1, state: .running), requestBody: nil),
        ])
        try store.commit()
        #expect(store.failure == nil)
        #expect(try store.loadSessions().map(\.id) == ["s"])
        #expect(try store.loadTasks().map(\.0.id) == [2])
        #expect(Self.failures(metrics, "rejected") == 1)
    }

    @Test func healthReportsABurstOnceAndItsEnd() {
        var health = StoreHealth()
        let start = ContinuousClock.now
        let full = StoreFailure(kind: .diskFull, reason: "SQLite error 13")
        #expect(health.committed(at: start) == .none)
        #expect(health.failed(full, at: start) == .began(full))
        #expect(health.failed(full, at: start + .seconds(1)) == .none)
        let io = StoreFailure(kind: .unavailable, reason: "SQLite error 10")
        #expect(health.failed(io, at: start + .seconds(2)) == .changed(io))
        #expect(health.failure == io)
        #expect(health.committed(at: start + .seconds(3)) == .recovered(attempts: 3, duration: .seconds(3)))
        #expect(health.failure == nil)
        #expect(health.committed(at: start + .seconds(4)) == .none)
    }
}

/// The queue of pending writes coalesces a task's saves while commits fail.
@Suite struct PendingWritesTests {
    @Test func aTaskKeepsOneSaveInTheFirstPlaceWithTheNewestContent() {
        var writes = PendingWrites()
        let first = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 1, state: .running), requestBody: nil))
        let body = writes.append(.saveBody(taskId: 1, body: Data("b".utf8)))
        _ = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 3, state: .completed), requestBody: nil))
        _ = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 2, state: .running), requestBody: nil))
        _ = writes.append(.deleteTask(id: 1))
        let afterDelete = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 4, state: .completed), requestBody: nil))
        let other = writes.append(.saveTask(StoreTests.task(2, session: "s", version: 1, state: .running), requestBody: nil))
        writes.putBack(writes.takeAll())
        #expect(writes.items.map(\.seq) == [first, body, 5, afterDelete, other])
        guard case .saveTask(let kept, _, _, _) = writes.items[0].operation else { Issue.record("not a save"); return }
        #expect(kept.version == 3)
        #expect(writes.containsAny(through: first))
    }

    /// A task saved at its start, response and completion before one commit is written once.
    @Test func oneCommitWritesEachTaskOnce() {
        var writes = PendingWrites()
        _ = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 1, state: .running), requestBody: nil))
        _ = writes.append(.saveTask(StoreTests.task(2, session: "s", version: 1, state: .running), requestBody: nil))
        _ = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 2, state: .running), requestBody: nil))
        _ = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 3, state: .completed), requestBody: nil))
        let batch = writes.takeAll()
        let saved = batch.compactMap { write -> (Int, Int)? in
            if case .saveTask(let task, _, _, _) = write.operation { return (task.id, task.version) }
            return nil
        }
        #expect(saved.map(\.0) == [1, 2])
        #expect(saved.map(\.1) == [3, 1])
        #expect(writes.items.isEmpty)
    }

    /// Of two saves of one version the first's content stays; saves of different tasks and
    /// other writes are kept as they were queued.
    @Test func ofEqualVersionsTheFirstSaveIsKept() {
        var writes = PendingWrites()
        let first = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 2, state: .running), requestBody: nil))
        let body = writes.append(.saveBody(taskId: 2, body: Data("b".utf8)))
        _ = writes.append(.saveTask(StoreTests.task(1, session: "s", version: 2, state: .completed), requestBody: nil))
        let other = writes.append(.saveTask(StoreTests.task(2, session: "s", version: 1, state: .running), requestBody: nil))
        let batch = writes.takeAll()
        #expect(batch.map(\.seq) == [first, body, other])
        guard case .saveTask(let kept, _, _, _) = batch[0].operation else { Issue.record("not a save"); return }
        #expect(kept.state == .running)
    }
}
