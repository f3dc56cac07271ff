import Dispatch
import FoundationEssentials
import Glibc
import HTTPServer
import Testing

extension LiveServerTests {
    /// Long-polls: answers given after handle() returned, from other threads, and at stop.
    @Suite struct Suspension {
        @Test func deferredResponseFromAnotherThread() throws {
            let handler = ClosureHandler { request, responder in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) {
                    responder.respond(HTTPResponse(status: 200, body: Data("late \(request.path)".utf8)))
                }
            }
            try withServer(handler: handler) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let clock = ContinuousClock()
                let start = clock.now
                let response = try connection.request("GET", "/wait")
                let elapsed = clock.now - start
                #expect(response.status == 200)
                #expect(response.text == "late /wait")
                #expect(elapsed >= .milliseconds(190))
                #expect(elapsed < .seconds(5))
                #expect(eventually { server.suspendedCount == 0 })
                // The resumed connection is still good for another request.
                let again = try connection.request("GET", "/again")
                #expect(again.text == "late /again")
            }
        }

        /// Answers given from another thread at once race with handle() returning and the
        /// connection being suspended; none may be lost or resume an unsuspended connection.
        @Test func answersRacingTheSuspensionAreNeverLost() throws {
            let handler = ClosureHandler { request, responder in
                DispatchQueue.global().async {
                    responder.respond(HTTPResponse(status: 200, body: Data(request.path.utf8)))
                }
            }
            try withServer(handler: handler) { server in
                let connections = try (0..<4).map { _ in try RawHTTPConnection(port: server.port) }
                var answered = 0
                for round in 0..<250 {
                    for (index, connection) in connections.enumerated() {
                        try connection.send("GET /r/\(round)/\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
                    }
                    for (index, connection) in connections.enumerated() {
                        let response = try connection.readResponse()
                        if response.status == 200 && response.text == "/r/\(round)/\(index)" { answered += 1 }
                    }
                }
                #expect(answered == 1000)
                #expect(eventually { server.suspendedCount == 0 })
            }
        }

        @Test func fiveHundredHeldConnectionsUseNoThreads() throws {
            let held = HeldResponders()
            let handler = ClosureHandler { _, responder in held.hold(responder) }
            try withServer(handler: handler) { server in
                // Warm up: one request through the same path, so lazily created threads exist.
                let warm = try RawHTTPConnection(port: server.port)
                try warm.send("GET /warm HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(eventually { held.count == 1 })
                held.takeAll().forEach { $0.respond(HTTPResponse(status: 204)) }
                #expect(try warm.readResponse().status == 204)

                let threadsBefore = processThreadCount()
                let connections = try (0..<500).map { index in
                    let connection = try RawHTTPConnection(port: server.port, timeout: 30)
                    try connection.send("GET /poll/\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
                    return connection
                }
                #expect(eventually(within: 30) { server.suspendedCount == 500 })
                let threadsHeld = processThreadCount()
                #expect(threadsHeld - threadsBefore <= 4, "threads: \(threadsBefore) before, \(threadsHeld) with 500 held")

                for responder in held.takeAll() {
                    responder.respond(HTTPResponse(status: 200, body: Data("news".utf8)))
                }
                var answered = 0
                for connection in connections {
                    let response = try connection.readResponse()
                    if response.status == 200 && response.text == "news" { answered += 1 }
                }
                #expect(answered == 500)
                #expect(eventually { server.suspendedCount == 0 })
            }
        }

        @Test func stopAnswersHeldRequestsWith503() throws {
            let held = HeldResponders()
            let handler = ClosureHandler { _, responder in held.hold(responder) }
            let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, errorResponse: testErrorResponse)
            let server = HTTPServer(configuration: configuration, handler: handler)
            try server.start()
            let port = server.port
            let connections = try (0..<20).map { _ in
                let connection = try RawHTTPConnection(port: port)
                try connection.send("GET /poll HTTP/1.1\r\nHost: x\r\n\r\n")
                return connection
            }
            #expect(eventually { server.suspendedCount == 20 })

            server.stop()
            #expect(server.suspendedCount == 0)
            for connection in connections {
                let response = try connection.readResponse()
                #expect(response.status == 503)
                #expect(response.headers["X-Error-Code"] == "shutting_down")
            }
            // Answers after stop are ignored, a second stop is a no-op, and nothing listens.
            held.takeAll().forEach { $0.respond(HTTPResponse(status: 200)) }
            server.stop()
            #expect(throws: RawHTTPError.self) { try RawHTTPConnection(port: port) }
        }
    }
}
