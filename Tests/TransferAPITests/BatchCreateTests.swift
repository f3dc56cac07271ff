import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// POST /v1/sessions/{sid}/tasks:batch: all or nothing, in order, one transaction.
@Suite struct BatchCreateTests {
    static func batchPath(_ session: String) -> String { "/v1/sessions/\(session)/tasks:batch" }

    /// `count` data task specs to `url(n)`, described "task n".
    static func specs(_ count: Int, extra: [String: Any] = [:], url: (Int) -> String) -> [[String: Any]] {
        (0..<count).map { n in
            var spec: [String: Any] = ["kind": "data", "description": "task \(n)", "request": ["url": url(n)]]
            spec.merge(extra) { _, new in new }
            return spec
        }
    }

    /// All tasks of a session, following the list's cursor.
    static func allTasks(_ daemon: DaemonFixture, _ session: String) async throws -> [[String: Any]] {
        var all: [[String: Any]] = []
        var cursor: String?
        repeat {
            let response = try await daemon.get("/v1/sessions/\(session)/tasks?limit=1000" + (cursor.map { "&cursor=\($0)" } ?? ""))
            try #require(response.status == 200, "list: \(response)")
            let page = try response.object()
            all += try #require(page["items"] as? [[String: Any]])
            cursor = page.string("next")
        } while cursor != nil
        return all
    }

    @Test func createsInOrderAndAdmitsEqualPrioritiesInThatOrder() async throws {
        let origin = try OriginServer { request in .text("ok \(request.path)") }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            // One connection per host: the origin sees the tasks in admission order.
            let sid = try #require(try await daemon.createSession(["configuration": ["httpMaximumConnectionsPerHost": 1]]).string("id"))
            let count = 30
            let response = try await daemon.post(Self.batchPath(sid), json: ["tasks": Self.specs(count) { origin.url("/item/\($0)") }])
            try #require(response.status == 201, "batch: \(response)")
            let tasks = try #require(try response.object()["tasks"] as? [[String: Any]])
            try #require(tasks.count == count)
            #expect(tasks.map { $0.string("description") } == (0..<count).map { "task \($0)" })
            let ids = tasks.compactMap { $0.int("id") }
            #expect(ids == Array(ids[0]..<(ids[0] + count)), "ids are consecutive, in the order given")
            #expect(tasks.allSatisfy { $0.string("state") == "running" && $0.string("sessionId") == sid })

            for id in ids { try await daemon.waitForCompletion(id) }
            #expect(origin.requests.map(\.path) == (0..<count).map { "/item/\($0)" })
        }
    }

    /// A bad spec anywhere refuses the whole batch, names its index, and leaves what was stored
    /// as it was (no task, no task id used).
    /// A bad spec: where it goes in the batch, its JSON, and the error it must give.
    struct BadSpec: Sendable, CustomTestStringConvertible {
        let index: Int
        let json: String
        let status: Int
        let code: String
        let field: String
        var testDescription: String { field }
    }

    @Test(arguments: [
        BadSpec(index: 3, json: #"{"kind": "data", "request": {"url": "not a url"}}"#, status: 422, code: "invalid_url", field: "tasks[3].request.url"),
        BadSpec(index: 2, json: #"{"kind": "data", "request": {"url": "http://127.0.0.1:1/"}, "bogus": 1}"#, status: 400, code: "unknown_field", field: "tasks[2].bogus"),
        BadSpec(index: 1, json: #"{"request": {"url": "http://127.0.0.1:1/"}}"#, status: 400, code: "missing_field", field: "tasks[1].kind"),
        BadSpec(index: 4, json: #"{"kind": "download", "request": {"url": "http://127.0.0.1:1/"}, "destination": "../outside"}"#, status: 400, code: "invalid_destination", field: "tasks[4].destination"),
        BadSpec(index: 0, json: #"{"kind": "upload", "request": {"url": "http://127.0.0.1:1/", "method": "PUT", "body": {"blob": "nope"}}}"#, status: 422, code: "invalid_value", field: "tasks[0].request.body.blob"),
    ])
    func aBadSpecCreatesNothing(bad: BadSpec) async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let before = try #require(try await daemon.dataTask(in: sid, ["url": "http://127.0.0.1:1/"], extra: ["state": "suspended"]).int("id"))
            var specs: [Any] = Self.specs(5, extra: ["state": "suspended"]) { "http://127.0.0.1:1/\($0)" }
            specs[bad.index] = try JSONSerialization.jsonObject(with: Data(bad.json.utf8))
            let response = try await daemon.post(Self.batchPath(sid), json: ["tasks": specs])
            #expect(response.status == bad.status, "\(response)")
            #expect(response.errorCode == bad.code)
            #expect(response.error?.string("field") == bad.field)
            #expect(response.error?.string("message")?.contains(bad.field) == true, "the message names the field: \(response)")

            let stored = try await Self.allTasks(daemon, sid)
            #expect(stored.compactMap { $0.int("id") } == [before])
            let next = try #require(try await daemon.dataTask(in: sid, ["url": "http://127.0.0.1:1/"], extra: ["state": "suspended"]).int("id"))
            #expect(next == before + 1, "a refused batch takes no task id")
        }
    }

    /// Created under one hold of the lock: a reader sees none of a batch or all of it.
    @Test func aConcurrentReaderSeesAllOfABatchOrNone() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            // One page (limit 1000) holds every task of the four batches.
            let size = 250, batches = 4
            let reader = daemon.newClient()
            async let counts: [Int] = {
                var seen: [Int] = []
                while seen.last != size * batches {
                    let response = try await daemon.request("GET", "/v1/sessions/\(sid)/tasks?limit=1000", client: reader)
                    try #require(response.status == 200)
                    seen.append(try #require(try response.object()["items"] as? [[String: Any]]).count)
                }
                return seen
            }()
            for _ in 0..<batches {
                let response = try await daemon.post(Self.batchPath(sid), json: ["tasks": Self.specs(size, extra: ["state": "suspended"]) { "http://127.0.0.1:1/\($0)" }])
                try #require(response.status == 201, "\(response)")
            }
            let seen = try await counts
            #expect(seen.allSatisfy { $0 % size == 0 }, "partial batches seen: \(Set(seen).filter { $0 % size != 0 }.sorted())")
        }
    }

    @Test func aBatchIsStoredAndSurvivesARestart() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let response = try await daemon.post(Self.batchPath(sid), json: ["tasks": Self.specs(300, extra: ["state": "suspended"]) { "http://127.0.0.1:1/\($0)" }])
            try #require(response.status == 201, "\(response)")
            let created = try #require(try response.object()["tasks"] as? [[String: Any]])
            daemon.stop()
            let again = try daemon.restarted()
            defer { again.stop() }
            let stored = try await Self.allTasks(again, sid)
            #expect(stored.compactMap { $0.int("id") } == created.compactMap { $0.int("id") })
            #expect(stored.compactMap { $0.string("description") } == created.compactMap { $0.string("description") })
            #expect(stored.allSatisfy { $0.string("state") == "suspended" })
        }
    }

    @Test func suspendedTasksWaitForResume() async throws {
        let origin = try OriginServer { _ in .text("ok") }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let response = try await daemon.post(Self.batchPath("shared"), json: ["tasks": Self.specs(3, extra: ["state": "suspended"]) { origin.url("/\($0)") }])
            try #require(response.status == 201, "\(response)")
            let tasks = try #require(try response.object()["tasks"] as? [[String: Any]])
            #expect(tasks.allSatisfy { $0.string("state") == "suspended" })
            let second = try #require(tasks[1].int("id"))
            let resumed = try await daemon.post("/v1/tasks/\(second)/resume")
            #expect(resumed.status == 200, "\(resumed)")
            let done = try await daemon.waitForCompletion(second)
            #expect(done.isNull("error"))
            #expect(origin.requests.map(\.path) == ["/1"], "only the resumed task ran")
        }
    }

    /// Ephemeral: the batch lives in memory only, and its ids are never given again.
    @Test func anEphemeralBatchIsNotStoredButItsIdsStayTaken() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let response = try await daemon.post(Self.batchPath(sid), json: ["tasks": Self.specs(5, extra: ["state": "suspended"]) { "http://127.0.0.1:1/\($0)" }])
            try #require(response.status == 201, "\(response)")
            let ids = try #require(try response.object()["tasks"] as? [[String: Any]]).compactMap { $0.int("id") }
            #expect(try await Self.allTasks(daemon, sid).count == 5)
            daemon.stop()
            let again = try daemon.restarted()
            defer { again.stop() }
            #expect(try await again.get("/v1/sessions/\(sid)").status == 404)
            let next = try #require(try await again.dataTask(["url": "http://127.0.0.1:1/"], extra: ["state": "suspended"]).int("id"))
            #expect(next > (ids.max() ?? 0))
        }
    }

    @Test func theBatchSizeIsLimited() async throws {
        try await DaemonFixture.with { daemon in
            let spec: [String: Any] = ["kind": "data", "request": ["url": "http://127.0.0.1:1/"], "state": "suspended"]
            let tooMany = try await daemon.post(Self.batchPath("shared"), json: ["tasks": Array(repeating: spec, count: TransferService.maxBatchSize + 1)])
            #expect(tooMany.status == 413, "\(tooMany)")
            #expect(tooMany.errorCode == "too_large")
            #expect(tooMany.error?.string("field") == "tasks")

            let empty = try await daemon.post(Self.batchPath("shared"), json: ["tasks": [Any]()])
            #expect(empty.status == 422, "\(empty)")
            #expect(empty.error?.string("field") == "tasks")

            #expect(try await Self.allTasks(daemon, "shared").isEmpty)
        }
    }

    @Test func refusedForAnUnknownOrInvalidatedSessionAndOtherMethods() async throws {
        try await DaemonFixture.with { daemon in
            let body = ["tasks": Self.specs(2) { "http://127.0.0.1:1/\($0)" }]
            let unknown = try await daemon.post(Self.batchPath("nope"), json: body)
            #expect(unknown.status == 404, "\(unknown)")

            let sid = try #require(try await daemon.createSession().string("id"))
            #expect(try await daemon.post("/v1/sessions/\(sid)/invalidate").status == 200)
            let invalidated = try await daemon.post(Self.batchPath(sid), json: body)
            #expect(invalidated.status == 409, "\(invalidated)")
            #expect(invalidated.errorCode == "session_invalidated")

            let get = try await daemon.get(Self.batchPath("shared"))
            #expect(get.status == 405, "\(get)")
            #expect(get.header("Allow") == "POST")
        }
    }
}
