import FoundationEssentials
import Glibc
import HTTPServer
import TestSupport
import Testing

/// Tests against a real server on 127.0.0.1 (port 0). Serialized, nested suites included,
/// so that the thread-count measurement sees no other server of this target at work.
@Suite(.serialized) enum LiveServerTests {}

extension LiveServerTests {
    @Suite struct RoundTrip {
        @Test func keepAliveServesManyRequestsOnOneConnection() throws {
            try withServer(handler: echoHandler()) { server in
                #expect(server.port > 0)
                let connection = try RawHTTPConnection(port: server.port)
                var ids: [UInt64] = []
                for index in 0..<5 {
                    let response = try connection.request("GET", "/v1/tasks/a%20b\(index)?x=1&y=two%20words&x=3")
                    #expect(response.status == 200)
                    #expect(response.text == "GET /v1/tasks/a b\(index) x=3&y=two words")
                    #expect(response.headers["Connection"]?.lowercased() != "close")
                    #expect(response.headers["X-Remote"]?.hasPrefix("127.0.0.1:") == true)
                    ids.append(UInt64(response.headers["X-Request-Id"] ?? "") ?? 0)
                }
                #expect(ids.count == 5)
                #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
            }
        }

        @Test func postBodyRoundTrips() throws {
            let body = Data(count: 200_000) { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try withServer(handler: echoHandler()) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let response = try connection.request("POST", "/echo", body: body)
                #expect(response.status == 200)
                #expect(response.headers["Content-Length"] == String(body.count))
                #expect(response.body == body)
                // Chunked upload below the limit, on the same connection.
                try connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
                let chunked = try connection.readResponse()
                #expect(chunked.status == 200)
                #expect(chunked.text == "hello world")
            }
        }

        @Test func responseHeadersAndStatusAreSent() throws {
            let handler = ClosureHandler { _, responder in
                var headers: HTTPHeaders = ["Content-Type": "application/json", "Content-Length": "999"]
                headers.add(name: "Set-Cookie", value: "a=1")
                headers.add(name: "Set-Cookie", value: "b=2")
                responder.respond(HTTPResponse(status: 201, headers: headers, body: Data("{}".utf8)))
            }
            try withServer(handler: handler) { server in
                let response = try RawHTTPConnection(port: server.port).request("PUT", "/x", body: Data("1".utf8))
                #expect(response.status == 201)
                #expect(response.headers["content-type"] == "application/json")
                #expect(response.headers["Content-Length"] == "2")
                #expect(response.headers.values(name: "Set-Cookie") == ["a=1", "b=2"])
                #expect(response.text == "{}")
            }
        }

        @Test func fileBodyIsSentFromOffsetAndMissingFileIs404() throws {
            let path = "/tmp/httpserver-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
            try Data("0123456789".utf8).write(to: URL(fileURLWithPath: path))
            defer { unlink(path) }
            let handler = ClosureHandler { request, responder in
                let file = request.path == "/missing" ? path + ".nope" : path
                responder.respond(HTTPResponse(status: 200, body: .file(path: file, offset: 2, length: 5)))
            }
            try withServer(handler: handler) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let found = try connection.request("GET", "/file")
                #expect(found.status == 200)
                #expect(found.text == "23456")
                let missing = try connection.request("GET", "/missing")
                #expect(missing.status == 404)
                #expect(missing.headers["X-Error-Code"] == "not_found")
            }
        }
    }
}
