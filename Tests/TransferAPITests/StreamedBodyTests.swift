import Foundation
import Testing
import TestSupport

/// Upload bodies the client streams (`{"stream": true}`, URLSession's
/// uploadTask(withStreamedRequest:)): chunks posted with `body-chunks` go out in order as one
/// chunked request, `needNewBodyStream` says when the transfer waits, `body-end` completes it.
@Suite struct StreamedBodyTests {
    /// An origin that answers once the whole body arrived, echoing its length.
    private static func origin() throws -> OriginServer {
        try OriginServer { request in .respond(status: 201, headers: ["X-Received": "\(request.body.count)"], body: Data("stored".utf8)) }
    }

    private static func streamTask(_ daemon: DaemonFixture, session: String = "shared", _ url: String, extra: [String: Any] = [:]) async throws -> Int {
        var body: [String: Any] = ["kind": "upload", "request": ["url": url, "method": "PUT", "body": ["stream": true]]]
        body.merge(extra) { _, new in new }
        return try #require(try await daemon.createTask(in: session, body).int("id"))
    }

    private static func chunk(_ daemon: DaemonFixture, _ id: Int, _ bytes: Data) async throws -> APIResponse {
        try await daemon.request("POST", "/v1/tasks/\(id)/body-chunks", body: bytes, headers: ["Content-Type": "application/octet-stream"])
    }

    @Test func chunksPostedWhileTheTransferWaitsGoOutInOrderAsOneChunkedRequest() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        // Three chunks of 1 MiB + 1 byte each: more than curl's upload buffer, so reads straddle them.
        let chunks = (0..<3).map { n in Data(count: (1 << 20) + 1) { UInt8(truncatingIfNeeded: $0 &* (n + 3) &+ n) } }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try await Self.streamTask(daemon, session: sid, origin.url("/put"))
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "needNewBodyStream" && $0.int("taskId") == id }
            for data in chunks {
                let response = try await Self.chunk(daemon, id, data)
                #expect(response.status == 200, "\(response)")
                try await Task.sleep(for: .milliseconds(100))
                let task = try await daemon.task(id)
                #expect(task.string("state") == "running", "the request ended before body-end: \(task)")
            }
            let total = chunks.reduce(0) { $0 + $1.count }
            #expect(try await daemon.task(id).value(at: "bodyStream.bytesReceived") as? Int == total)
            let ended = try await daemon.post("/v1/tasks/\(id)/body-end")
            #expect(ended.status == 200, "\(ended)")
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.value(at: "response.statusCode") as? Int == 201)
            #expect(task.value(at: "bodyStream.ended") as? Bool == true)
            #expect(task.value(at: "progress.bytesSent") as? Int == total)
            let received = try #require(origin.requests.last)
            #expect(received.method == "PUT")
            #expect(received.header("Transfer-Encoding")?.lowercased() == "chunked")
            #expect(received.body == chunks.reduce(Data(), +), "the origin got \(received.body.count) bytes")
            #expect(try await daemon.body(id).text == "stored")
            let waits = try await daemon.allEvents(sid).filter { $0.int("taskId") == id && $0.string("type") == "needNewBodyStream" }
            #expect(waits.count >= 3, "one wait before each chunk at least: \(waits.count)")
            #expect(FileSystemProbe.tree(daemon.dataPath + "/streams").isEmpty, "the spooled body outlived its task")
        }
    }

    @Test func aBodySentWholeBeforeTheTaskRunsIsSentWhenResumed() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try await Self.streamTask(daemon, origin.url("/later"), extra: ["state": "suspended"])
            #expect(try await Self.chunk(daemon, id, Data("hello, ".utf8)).status == 200)
            #expect(try await Self.chunk(daemon, id, Data("world".utf8)).status == 200)
            #expect(try await daemon.post("/v1/tasks/\(id)/body-end").status == 200)
            #expect(try await daemon.post("/v1/tasks/\(id)/resume").status == 200)
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(origin.requests.last?.body == Data("hello, world".utf8))
            #expect(task.value(at: "progress.bytesExpectedToSend") as? Int == 12)
        }
    }

    @Test func aClientThatStopsSendingTimesOutAndCancelFreesTheSpool() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let url = origin.url("/stalled")
            let stalled = try #require(try await daemon.createTask([
                "kind": "upload", "request": ["url": url, "method": "PUT", "body": ["stream": true], "timeoutInterval": 1],
            ]).int("id"))
            #expect(try await Self.chunk(daemon, stalled, Data("part".utf8)).status == 200)
            let start = ContinuousClock.now
            let timedOut = try await daemon.waitForCompletion(stalled)
            #expect(timedOut.value(at: "error.name") as? String == "timedOut", "\(timedOut)")
            #expect(seconds(since: start) < 5)
            #expect(!FileManager.default.fileExists(atPath: daemon.dataPath + "/streams/\(stalled).body"))

            let cancelled = try await Self.streamTask(daemon, origin.url("/cancelled"))
            #expect(try await Self.chunk(daemon, cancelled, Data("some".utf8)).status == 200)
            #expect(try await daemon.post("/v1/tasks/\(cancelled)/cancel").status == 200)
            let gone = try await daemon.waitForCompletion(cancelled)
            #expect(gone.value(at: "error.name") as? String == "cancelled")
            #expect(try await Self.chunk(daemon, cancelled, Data("late".utf8)).errorCode == "task_completed")
            #expect(!FileManager.default.fileExists(atPath: daemon.dataPath + "/streams/\(cancelled).body"))
        }
    }

    /// A 307 makes curl send the body again to the new location: read again from the spool.
    @Test func aRedirectThatKeepsTheMethodSendsTheWholeStreamedBodyAgain() async throws {
        let origin = try OriginServer { request in
            request.pathWithoutQuery == "/old"
                ? .respond(status: 307, headers: ["Location": "/new"])
                : .respond(status: 201, body: request.body)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try await Self.streamTask(daemon, origin.url("/old"))
            for part in ["first part, ", "second part"] {
                #expect(try await Self.chunk(daemon, id, Data(part.utf8)).status == 200)
            }
            #expect(try await daemon.post("/v1/tasks/\(id)/body-end").status == 200)
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.value(at: "response.statusCode") as? Int == 201)
            #expect(origin.requests.map(\.path) == ["/old", "/new"])
            #expect(origin.requests.last?.method == "PUT")
            #expect(try await daemon.body(id).text == "first part, second part")
        }
    }

    @Test func misuseIsRefusedWithClearErrors() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let plain = try #require(try await daemon.createTask(["kind": "upload", "request": ["url": origin.url("/p"), "method": "POST", "body": ["text": "x"]], "state": "suspended"]).int("id"))
            #expect(try await Self.chunk(daemon, plain, Data("x".utf8)).errorCode == "not_a_body_stream")
            #expect(try await daemon.post("/v1/tasks/\(plain)/body-end").errorCode == "not_a_body_stream")

            let onData = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": origin.url("/d"), "method": "POST", "body": ["stream": true]]])
            #expect(onData.status == 422)
            #expect(onData.error?.string("field") == "request.body.stream")
            let isFalse = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "upload", "request": ["url": origin.url("/d"), "method": "POST", "body": ["stream": false]]])
            #expect(isFalse.status == 422)
            #expect(isFalse.error?.string("field") == "request.body.stream")

            let id = try await Self.streamTask(daemon, origin.url("/s"), extra: ["state": "suspended"])
            #expect(try await Self.chunk(daemon, id, Data()).errorCode == "empty_chunk")
            #expect(try await daemon.post("/v1/tasks/\(id)/body-end").status == 200)
            #expect(try await Self.chunk(daemon, id, Data("x".utf8)).errorCode == "body_ended")
            #expect(try await daemon.post("/v1/tasks/\(id)/body-end").errorCode == "body_ended")
            #expect(try await Self.chunk(daemon, 999_999, Data("x".utf8)).status == 404)
            #expect(try await daemon.task(id).value(at: "bodyStream.bytesReceived") as? Int == 0)
        }
    }
}
