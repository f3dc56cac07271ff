import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore

/// A task creation is answered 201 only once its rows are committed, however its body was read
/// (straight from the bytes, or a spec of another shape decoded alone) and however its write
/// was settled (on the HTTP worker). Checked the way a crash would: the store is opened beside
/// the running daemon, with connections of its own, right after each answer; nothing is
/// stopped or flushed first.
@Suite struct CreationCommitTests {
    /// Spec `n` of a batch: most of the common shape, every seventh with a rate limit (read by
    /// the decoder alone), every fifth a download to a destination.
    static func spec(_ n: Int) -> [String: Any] {
        var spec: [String: Any] = ["kind": "data", "description": "task \(n)", "state": "suspended",
                                   "request": ["url": "http://127.0.0.1:1/\(n)", "headers": ["X-N": "\(n)"]]]
        if n % 7 == 0 { spec["bandwidthLimit"] = ["downloadBytesPerSecond": 1000 + n] }
        if n % 5 == 0 {
            spec["kind"] = "download"
            spec["destination"] = "commit/\(n).bin"
        }
        return spec
    }

    /// The stored tasks, by id, read by a store opened beside the daemon.
    static func storedTasks(_ daemon: DaemonFixture) throws -> [Int: TransferTask] {
        let store = try Store(dataDirectory: daemon.directory.path)
        defer { store.close() }
        return Dictionary(uniqueKeysWithValues: try store.loadTasks().map { ($0.0.id, $0.0) })
    }

    @Test func aBatchIsCommittedBeforeItsAnswer() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let count = 300
            let response = try await daemon.post("/v1/sessions/\(sid)/tasks:batch", json: ["tasks": (0..<count).map(Self.spec)])
            try #require(response.status == 201, "\(response)")
            let ids = try #require(try response.object()["tasks"] as? [[String: Any]]).compactMap { $0.int("id") }
            try #require(ids.count == count)

            let stored = try Self.storedTasks(daemon)
            for (n, id) in ids.enumerated() {
                let task = try #require(stored[id], "task \(id) (spec \(n)) answered 201 but not in the store")
                #expect(task.sessionId == sid)
                #expect(task.description == "task \(n)")
                #expect(task.state == .suspended)
                #expect(task.originalRequest.url == "http://127.0.0.1:1/\(n)")
                #expect(task.originalRequest.headers["X-N"] == "\(n)")
                #expect(task.kind == (n % 5 == 0 ? .download : .data))
                #expect(task.destination == (n % 5 == 0 ? "commit/\(n).bin" : nil))
                #expect(task.bandwidthLimit?.downloadBytesPerSecond == (n % 7 == 0 ? 1000 + n : nil))
            }
        }
    }

    @Test func aRefusedBatchLeavesTheStoreAsItWas() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let first = try await daemon.post("/v1/sessions/\(sid)/tasks:batch", json: ["tasks": (0..<20).map(Self.spec)])
            try #require(first.status == 201, "\(first)")
            let before = try Self.storedTasks(daemon)

            // The bad spec last, after specs of both shapes were read.
            var specs: [Any] = (0..<50).map(Self.spec)
            specs.append(["kind": "data", "request": ["url": "http://127.0.0.1:1/", "method": "G ET"]])
            let refused = try await daemon.post("/v1/sessions/\(sid)/tasks:batch", json: ["tasks": specs])
            #expect(refused.status == 422, "\(refused)")
            #expect(refused.error?.string("field") == "tasks[50].request.method")
            #expect(try Self.storedTasks(daemon).keys.sorted() == before.keys.sorted())
        }
    }

    @Test func singlePostsAreCommittedBeforeTheirAnswers() async throws {
        try await DaemonFixture.with { daemon in
            let store = try Store(dataDirectory: daemon.directory.path)
            defer { store.close() }
            for n in 0..<20 {
                let response = try await daemon.post("/v1/sessions/shared/tasks", json: Self.spec(n))
                try #require(response.status == 201, "\(response)")
                let id = try #require(try response.object().int("id"))
                let stored = try store.loadTasks().first { $0.0.id == id }?.0
                #expect(stored?.description == "task \(n)", "task \(id) answered 201 but not in the store")
            }
        }
    }
}
