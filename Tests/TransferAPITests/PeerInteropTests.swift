import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Interoperability with real servers: httpbin (under gunicorn) and nginx, started by
/// scripts/test.sh. A missing peer fails the test with a message saying how to run it.
@Suite struct PeerInteropTests {
    /// Runs a data task against a peer and returns the completed task and its body.
    private func run(_ daemon: DaemonFixture, session: String = "shared", _ request: [String: Any]) async throws -> (task: [String: Any], body: APIResponse) {
        let id = try #require(try await daemon.dataTask(in: session, request).int("id"))
        let task = try await daemon.waitForCompletion(id)
        #expect(task.isNull("error"), "\(request["url"] ?? ""): \(task["error"] ?? "")")
        return (task, try await daemon.body(id))
    }

    @Test func httpbinGetEchoesTheQuery() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let (task, body) = try await run(daemon, ["url": "\(httpbin)/get?city=Z%C3%BCrich&n=42&n=43"])
            #expect(task.value(at: "response.statusCode") as? Int == 200)
            #expect(task.value(at: "response.mimeType") as? String == "application/json")
            #expect(body.header("Content-Type") == "application/json")
            let echo = try body.object()
            #expect(echo.value(at: "args.city") as? String == "Zürich")
            #expect(echo.value(at: "args.n") as? [String] == ["42", "43"])
            #expect(echo.string("url")?.hasPrefix("\(httpbin)/get?city=") == true)
        }
    }

    @Test func httpbinPostEchoesJSON() async throws {
        let httpbin = try Peers.httpbin()
        let document: [String: Any] = ["name": "widget", "count": 3, "tags": ["x", "y"], "price": 9.5, "active": false]
        try await DaemonFixture.with { daemon in
            let (task, body) = try await run(daemon, ["url": "\(httpbin)/post", "method": "POST", "body": ["json": document]])
            #expect(task.value(at: "response.statusCode") as? Int == 200)
            let echo = try body.object()
            #expect(jsonEqual(echo["json"], document), "httpbin saw \(echo["json"] ?? "nil")")
            #expect(echo.value(at: "headers.Content-Type") as? String == "application/json")
            #expect(task.value(at: "progress.bytesSent") as? Int == task.value(at: "originalRequest.bodyLength") as? Int)
        }
    }

    @Test func httpbinSeesCustomAndSessionHeaders() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["configuration": [
                "httpAdditionalHeaders": ["X-Session-Header": "session-value", "User-Agent": "transferd-tests/1.0"],
            ]]).string("id"))
            let (_, body) = try await run(daemon, session: sid, [
                "url": "\(httpbin)/headers",
                "headers": ["X-Custom-Header": "custom value", "Accept": "application/json"],
            ])
            let headers = try #require(try body.object().object("headers"))
            #expect(headers.string("X-Custom-Header") == "custom value")
            #expect(headers.string("X-Session-Header") == "session-value")
            #expect(headers.string("User-Agent") == "transferd-tests/1.0")
            #expect(headers.string("Accept") == "application/json")
        }
    }

    @Test func httpbinRedirectsAreFollowed() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let (task, body) = try await run(daemon, session: sid, ["url": "\(httpbin)/redirect/3"])
            let id = try #require(task.int("id"))
            #expect(task.value(at: "response.statusCode") as? Int == 200)
            #expect(task.value(at: "currentRequest.url") as? String == "\(httpbin)/get")
            #expect(task.value(at: "response.url") as? String == "\(httpbin)/get")
            #expect(try body.object().string("url") == "\(httpbin)/get")
            let redirects = try await daemon.allEvents(sid).filter { $0.int("taskId") == id && $0.string("type") == "willPerformHTTPRedirection" }
            #expect(redirects.count == 3)
            #expect(redirects.allSatisfy { $0.int("statusCode") == 302 })
            #expect(redirects.last?.string("newURL") == "\(httpbin)/get")
        }
    }

    @Test func httpbinTeapotIsAResponse() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let (task, body) = try await run(daemon, ["url": "\(httpbin)/status/418"])
            #expect(task.value(at: "response.statusCode") as? Int == 418)
            #expect(body.status == 200)
            #expect(body.text.contains("teapot"))
        }
    }

    @Test func httpbinGzipIsDecoded() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let (task, body) = try await run(daemon, ["url": "\(httpbin)/gzip"])
            let headers = try #require(task.value(at: "response.headers") as? [String: String])
            #expect(headers.first { $0.key.lowercased() == "content-encoding" }?.value == "gzip")
            let echo = try body.object()
            #expect(echo.bool("gzipped") == true)
            #expect(task.value(at: "progress.bytesReceived") as? Int == body.body.count)
        }
    }

    @Test func httpbinBytesArriveWithTheExactLength() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let (task, body) = try await run(daemon, ["url": "\(httpbin)/bytes/100000?seed=7"])
            #expect(body.body.count == 100_000)
            #expect(task.value(at: "progress.bytesReceived") as? Int == 100_000)
            #expect(task.value(at: "response.expectedContentLength") as? Int == 100_000)
            #expect(body.header("Content-Type") == "application/octet-stream")
        }
    }

    @Test func nginxFilesArriveByteForByte() async throws {
        let nginx = try Peers.nginx()
        let root = try Peers.nginxDocumentRoot()
        try await DaemonFixture.with { daemon in
            let (textTask, text) = try await run(daemon, ["url": "\(nginx)/files/hello.txt"])
            #expect(text.body == (try Data(contentsOf: root.appendingPathComponent("hello.txt"))))
            #expect(textTask.value(at: "response.mimeType") as? String == "text/plain")
            #expect(text.header("Content-Type") == "text/plain")

            let (binaryTask, binary) = try await run(daemon, ["url": "\(nginx)/files/1MiB.bin"])
            let original = try Data(contentsOf: root.appendingPathComponent("1MiB.bin"))
            #expect(binary.body.count == 1 << 20)
            #expect(binary.body == original)
            #expect(binaryTask.value(at: "response.expectedContentLength") as? Int == 1 << 20)
            #expect(binaryTask.value(at: "response.suggestedFilename") as? String == "1MiB.bin")

            let (missing, _) = try await run(daemon, ["url": "\(nginx)/files/missing.bin"])
            #expect(missing.value(at: "response.statusCode") as? Int == 404)
        }
    }
}
