import FoundationEssentials
import HTTPServer
import Testing

extension LiveServerTests {
    /// 413s and preflight refusals: the handler never sees these requests.
    @Suite struct Limits {
        @Test func contentLengthOverLimitIs413AtOnce() throws {
            let handled = Counter()
            let preflighted = Counter()
            var handler = echoHandler()
            handler.onPreflight = { _ in preflighted.increment(); return nil }
            let inner = handler.onHandle
            handler.onHandle = { handled.increment(); inner($0, $1) }
            try withServer(maxBodySize: 1024, handler: handler) { server in
                let connection = try RawHTTPConnection(port: server.port)
                // Only the head is sent: the answer must not wait for the 4 KiB body.
                try connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n")
                let response = try connection.readResponse()
                #expect(response.status == 413)
                #expect(response.headers["X-Error-Code"] == "body_too_large")
                #expect(response.text.contains("1024"))
                // The unread body cannot be skipped: libmicrohttpd closes the connection.
                #expect(connection.readsEndOfStream())
                // A body exactly at the limit is accepted.
                let fits = try RawHTTPConnection(port: server.port)
                    .request("POST", "/upload", body: Data(repeating: 65, count: 1024))
                #expect(fits.status == 200)
                #expect(fits.body.count == 1024)
            }
            #expect(handled.count == 1)
            #expect(preflighted.count == 1)
        }

        @Test func chunkedBodyOverLimitIs413WhenTheUploadEnds() throws {
            let handled = Counter()
            var handler = echoHandler()
            let inner = handler.onHandle
            handler.onHandle = { handled.increment(); inner($0, $1) }
            try withServer(maxBodySize: 1024, handler: handler) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let chunk = String(repeating: "z", count: 1000)
                try connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                for _ in 0..<3 { try connection.send("3e8\r\n\(chunk)\r\n") }
                try connection.send("0\r\n\r\n")
                let response = try connection.readResponse()
                #expect(response.status == 413)
                #expect(response.headers["X-Error-Code"] == "body_too_large")
                #expect(handled.count == 0)
                // The whole body was read and discarded, so the connection stays usable.
                let next = try connection.request("GET", "/after")
                #expect(next.status == 200)
                #expect(next.text == "GET /after ")
            }
            #expect(handled.count == 1)
        }

        @Test func preflightRefusesBeforeTheBody() throws {
            let handled = Counter()
            var handler = echoHandler()
            handler.onPreflight = { head in
                head.headers["Authorization"] == nil
                    ? HTTPResponse(status: 401, headers: ["WWW-Authenticate": "Bearer"], body: Data("no".utf8))
                    : nil
            }
            let inner = handler.onHandle
            handler.onHandle = { handled.increment(); inner($0, $1) }
            try withServer(handler: handler) { server in
                // Without a body the refusal keeps the connection alive.
                let connection = try RawHTTPConnection(port: server.port)
                let refused = try connection.request("GET", "/secret")
                #expect(refused.status == 401)
                #expect(refused.headers["WWW-Authenticate"] == "Bearer")
                #expect(refused.text == "no")
                let allowed = try connection.request("GET", "/secret", headers: [("Authorization", "Bearer t")])
                #expect(allowed.status == 200)

                // With a body announced, the refusal comes before it is sent.
                let upload = try RawHTTPConnection(port: server.port)
                try upload.send("POST /secret HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
                let early = try upload.readResponse()
                #expect(early.status == 401)
                #expect(upload.readsEndOfStream())
            }
            #expect(handled.count == 1)
        }
    }
}
