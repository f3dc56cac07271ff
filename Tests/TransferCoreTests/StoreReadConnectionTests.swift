import Foundation
import SQLite
import TestSupport
import Synchronization
import Testing
@testable import TransferModel
@testable import TransferStore

/// Reads run on their own connections: while the writer holds a transaction open (a long batch
/// commit, a slow fsync), a body, the task list or a session load still answer at once, with
/// what was committed before.
@Suite struct StoreReadConnectionTests {
    @Test func readsDoNotWaitForTheWritersOpenTransaction() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        store.enqueue(.saveSession(StoreTests.session("s1")))
        store.enqueue(.saveTask(StoreTests.task(1, session: "s1", version: 1, state: .completed), requestBody: nil))
        store.enqueue(.saveBody(taskId: 1, body: Data("committed".utf8)))
        store.flush()

        // The writer's connection, inside a write transaction that stays open until released.
        let inTransaction = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? store.database.transaction { tx in
                try tx.run("INSERT OR REPLACE INTO task_bodies(task_id, body) VALUES(?, ?)", 1, Data("uncommitted".utf8))
                inTransaction.signal()
                release.wait()
            }
            writerDone.signal()
        }
        inTransaction.wait()
        defer {
            release.signal()
            writerDone.wait()
        }

        // Each read on another thread, so a read that waited for the writer fails the test
        // instead of hanging it.
        let reads = Mutex<[String]>([])
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let body = (try? store.body(taskId: 1)).flatMap { $0.map { String(decoding: $0, as: UTF8.self) } } ?? "nil"
            let tasks = (try? store.loadTasks().map(\.0.id)) ?? []
            let sessions = (try? store.loadSessions().map(\.id)) ?? []
            reads.withLock { $0 = [body, "\(tasks)", "\(sessions)"] }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 5) == .success, "a read waited for the writer's transaction")
        #expect(reads.withLock { $0 } == ["committed", "[1]", "[\"s1\"]"])
    }

    @Test func readConnectionsRefuseWrites() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        #expect(throws: SQLiteError.self) {
            try store.reader.run("INSERT INTO counters(name, value) VALUES('x', 1)")
        }
    }
}
