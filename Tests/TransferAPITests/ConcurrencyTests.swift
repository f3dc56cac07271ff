import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Many clients at once: the issue's "done means".
@Suite struct ConcurrencyTests {
    static let clients = 20
    static let tasksPerClient = 10

    /// The body task `n` posts: distinct content and length per task.
    static func payload(_ n: Int) -> Data {
        Data("payload-\(n)-".utf8) + Data(count: 100 + n * 37) { UInt8(truncatingIfNeeded: $0 &+ n &* 7) }
    }

    /// What the origin answers to it: method, path and length, then the body echoed.
    static func expectedBody(_ n: Int) -> Data {
        let body = payload(n)
        return Data("POST /item/\(n) \(body.count)\n".utf8) + body
    }

    @Test func twoHundredTasksFromTwentyClientsAllCompleteExactly() async throws {
        let origin = try OriginServer { request in
            .respond(headers: ["Content-Type": "application/octet-stream"],
                     body: Data("\(request.method) \(request.path) \(request.body.count)\n".utf8) + request.body)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["configuration": ["httpMaximumConnectionsPerHost": 16]]).string("id"))

            // 20 clients, each on its own connection, post 10 tasks each, all at once.
            let created = try await withThrowingTaskGroup(of: [(n: Int, id: Int)].self) { group in
                for client in 0..<Self.clients {
                    group.addTask {
                        let connection = daemon.newClient()
                        var made: [(n: Int, id: Int)] = []
                        for index in 0..<Self.tasksPerClient {
                            let n = client * Self.tasksPerClient + index
                            let response = try await daemon.request("POST", "/v1/sessions/\(sid)/tasks", json: [
                                "kind": "data",
                                "description": "task \(n)",
                                "request": [
                                    "url": origin.url("/item/\(n)"), "method": "POST",
                                    "headers": ["Content-Type": "application/octet-stream", "X-Task": String(n)],
                                    "body": ["base64": Self.payload(n).base64EncodedString()],
                                ] as [String: Any],
                            ], client: connection)
                            try #require(response.status == 201, "task \(n): \(response)")
                            made.append((n, try #require(try response.object().int("id"))))
                        }
                        return made
                    }
                }
                return try await group.reduce(into: [(n: Int, id: Int)]()) { $0 += $1 }
            }
            #expect(created.count == 200)
            #expect(Set(created.map(\.id)).count == 200, "task ids must be unique")
            #expect(Set(created.map(\.n)) == Set(0..<200))

            // The same 20 clients wait for their tasks and check every body.
            let checked = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in 0..<Self.clients {
                    let mine = created.filter { $0.n / Self.tasksPerClient == client }
                    group.addTask {
                        let connection = daemon.newClient()
                        var good = 0
                        for (n, id) in mine {
                            let task = try await daemon.waitForCompletion(id, timeout: 60, client: connection)
                            let body = try await daemon.body(id, client: connection)
                            let ok = task.isNull("error") && task.value(at: "response.statusCode") as? Int == 200
                                && task.string("description") == "task \(n)" && body.status == 200 && body.body == Self.expectedBody(n)
                            #expect(ok, "task \(n) (id \(id)): error \(task["error"] ?? "nil"), body \(body.body.count) bytes")
                            if ok { good += 1 }
                        }
                        return good
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(checked == 200)

            // The origin saw each task exactly once, with its own body.
            let requests = origin.requests
            #expect(requests.count == 200)
            for request in requests {
                let n = Int(request.header("X-Task") ?? "") ?? -1
                #expect(request.path == "/item/\(n)" && request.body == Self.payload(n), "\(request)")
            }
            #expect(Set(requests.map(\.path)).count == 200)

            // The stored view agrees: 200 completed tasks, 200 completions in the feed.
            let list = try await daemon.get("/v1/sessions/\(sid)/tasks?state=completed&limit=1000").object()
            #expect((list["items"] as? [[String: Any]])?.count == 200)
            #expect(list.isNull("next"))
            let events = try await daemon.allEvents(sid)
            let completions = events.filter { $0.string("type") == "didCompleteWithError" }
            #expect(completions.count == 200)
            #expect(Set(completions.compactMap { $0.int("taskId") }) == Set(created.map(\.id)))
            #expect(completions.allSatisfy { $0.isNull("error") })
            // Each completion is preceded, right before it, by its task's metrics, and no task has two.
            let metrics = events.filter { $0.string("type") == "didFinishCollectingMetrics" }
            #expect(metrics.count == 200)
            #expect(Set(metrics.compactMap { $0.int("taskId") }) == Set(created.map(\.id)))
            for (index, event) in events.enumerated() where event.string("type") == "didCompleteWithError" {
                let before = index > 0 ? events[index - 1] : [:]
                #expect(before.string("type") == "didFinishCollectingMetrics" && before.int("taskId") == event.int("taskId"), "\(before) before \(event)")
            }
        }
    }
}
