import FoundationEssentials
import Glibc
import HTTPServer
import Synchronization
import TestSupport
import Testing

/// What a `RecordingSink` saw, readable from the test's thread.
final class SinkLog: Sendable {
    struct Counts: Equatable {
        var writes = 0
        var bytes = 0
        var finished = 0
        var abandoned = 0
    }
    private let counts = Mutex(Counts())

    func record(_ change: (inout Counts) -> Void) { counts.withLock { change(&$0) } }
    var snapshot: Counts { counts.withLock { $0 } }
}

/// A sink that keeps the body in memory (for checking), optionally stops after `stopAfter` bytes,
/// and logs every call.
final class RecordingSink: HTTPBodySink {
    let maxBodySize: Int
    private let log: SinkLog
    private let stopAfter: Int?
    private var data = Data()

    init(maxBodySize: Int, log: SinkLog, stopAfter: Int? = nil) {
        self.maxBodySize = maxBodySize
        self.log = log
        self.stopAfter = stopAfter
    }

    func write(_ bytes: RawSpan) -> Bool {
        bytes.withUnsafeBytes { data.append(contentsOf: $0) }
        log.record { $0.writes += 1; $0.bytes += bytes.byteCount }
        return stopAfter.map { data.count <= $0 } ?? true
    }

    func finish() -> Result<any Sendable, HTTPBodyRefusal> {
        log.record { $0.finished += 1 }
        if let stopAfter, data.count > stopAfter {
            return .failure(HTTPBodyRefusal(HTTPResponse(status: 422, headers: ["X-Error-Code": "sink_stopped"], body: Data("stopped".utf8))))
        }
        return .success(data)
    }

    func abandon() {
        log.record { $0.abandoned += 1 }
    }
}

extension LiveServerTests {
    /// Request bodies streamed to a handler's `HTTPBodySink` instead of memory.
    @Suite struct StreamedBodies {
        /// Streams POST /sink to a `RecordingSink`; the handler answers with what it received.
        static func handler(log: SinkLog, limit: Int, stopAfter: Int? = nil, preflighted: Counter = Counter(), handled: Counter = Counter()) -> ClosureHandler {
            var handler = echoHandler()
            let echo = handler.onHandle
            handler.onPreflight = { _ in preflighted.increment(); return nil }
            handler.onBodySink = { head in
                head.path == "/sink" ? RecordingSink(maxBodySize: limit, log: log, stopAfter: stopAfter) : nil
            }
            handler.onHandle = { request, responder in
                handled.increment()
                guard let streamed = request.streamedBody as? Data else { return echo(request, responder) }
                let headers: HTTPHeaders = ["X-Streamed": "yes", "X-Memory-Body": String(request.body.count)]
                responder.respond(HTTPResponse(status: 200, headers: headers, body: streamed))
            }
            return handler
        }

        @Test func bodyGoesToTheSinkWithItsOwnLimit() throws {
            let log = SinkLog()
            let body = Data(count: 200_000) { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            // The server's limit is 1 KiB; the sink's 1 MiB applies to /sink.
            try withServer(maxBodySize: 1024, handler: Self.handler(log: log, limit: 1 << 20)) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let response = try connection.request("POST", "/sink", body: body)
                #expect(response.status == 200)
                #expect(response.headers["X-Streamed"] == "yes")
                #expect(response.headers["X-Memory-Body"] == "0")
                #expect(response.body == body)
                // Chunked, on the same connection.
                try connection.send("POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
                let chunked = try connection.readResponse()
                #expect(chunked.status == 200)
                #expect(chunked.text == "hello world")
                // An empty body still finishes the sink.
                let empty = try connection.request("POST", "/sink", body: Data())
                #expect(empty.status == 200)
                #expect(empty.body.isEmpty)
                // Other paths keep the in-memory body and the server's limit.
                let other = try connection.request("POST", "/other", body: Data(repeating: 66, count: 1024))
                #expect(other.status == 200)
                #expect(other.headers["X-Streamed"] == nil)
                #expect(other.body.count == 1024)
            }
            let counts = log.snapshot
            #expect(counts.finished == 3)
            #expect(counts.abandoned == 0)
            #expect(counts.bytes == body.count + 11)
        }

        @Test func contentLengthOverTheSinkLimitIs413AtOnceAndAbandoned() throws {
            let log = SinkLog()
            let preflighted = Counter(), handled = Counter()
            try withServer(handler: Self.handler(log: log, limit: 1000, preflighted: preflighted, handled: handled)) { server in
                let connection = try RawHTTPConnection(port: server.port)
                // Only the head: the answer must not wait for the body.
                try connection.send("POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
                let response = try connection.readResponse()
                #expect(response.status == 413)
                #expect(response.headers["X-Error-Code"] == "body_too_large")
                #expect(response.text.contains("1000"))
                #expect(connection.readsEndOfStream())
                // Exactly at the limit is accepted.
                let fits = try RawHTTPConnection(port: server.port).request("POST", "/sink", body: Data(repeating: 1, count: 1000))
                #expect(fits.status == 200)
                #expect(fits.body.count == 1000)
            }
            #expect(log.snapshot == SinkLog.Counts(writes: log.snapshot.writes, bytes: 1000, finished: 1, abandoned: 1))
            // As for the server's own limit, the refusal comes before preflight.
            #expect(preflighted.count == 1)
            #expect(handled.count == 1)
        }

        @Test func chunkedBodyOverTheSinkLimitIsAbandonedAtOnceAnd413AtTheEnd() throws {
            let log = SinkLog()
            let handled = Counter()
            try withServer(handler: Self.handler(log: log, limit: 1500, handled: handled)) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let chunk = String(repeating: "z", count: 1000)
                try connection.send("POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                try connection.send("3e8\r\n\(chunk)\r\n")
                try connection.send("3e8\r\n\(chunk)\r\n")
                // Abandoned as soon as the limit is crossed, before the client ends the body.
                #expect(eventually { log.snapshot.abandoned == 1 })
                try connection.send("3e8\r\n\(chunk)\r\n0\r\n\r\n")
                let response = try connection.readResponse()
                #expect(response.status == 413)
                #expect(response.headers["X-Error-Code"] == "body_too_large")
                #expect(response.text.contains("1500"))
                // The rest was read and discarded: the connection stays usable.
                let next = try connection.request("GET", "/after")
                #expect(next.status == 200)
            }
            let counts = log.snapshot
            #expect(counts.finished == 0)
            #expect(counts.abandoned == 1)
            #expect(counts.bytes <= 1500)
            #expect(handled.count == 1)
        }

        @Test func aSinkThatStopsAnswersWithItsRefusal() throws {
            let log = SinkLog()
            let handled = Counter()
            try withServer(handler: Self.handler(log: log, limit: 1 << 20, stopAfter: 100, handled: handled)) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let response = try connection.request("POST", "/sink", body: Data(repeating: 9, count: 100_000))
                #expect(response.status == 422)
                #expect(response.headers["X-Error-Code"] == "sink_stopped")
                let next = try connection.request("GET", "/after")
                #expect(next.status == 200)
            }
            let counts = log.snapshot
            // No write after the one that said stop; finish() gave the answer.
            #expect(counts.writes == 1)
            #expect(counts.finished == 1)
            #expect(counts.abandoned == 0)
            #expect(handled.count == 1)
        }

        @Test func aClientGoneMidBodyAbandonsTheSink() throws {
            let log = SinkLog()
            try withServer(handler: Self.handler(log: log, limit: 64 << 20)) { server in
                do {
                    let connection = try RawHTTPConnection(port: server.port)
                    try connection.send("POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
                    try connection.send(Data(repeating: 5, count: 1 << 20))
                    #expect(eventually { log.snapshot.bytes == 1 << 20 }, "bytes \(log.snapshot)")
                }  // closed here
                #expect(eventually { log.snapshot.abandoned == 1 })
            }
            #expect(log.snapshot.finished == 0)
            #expect(log.snapshot.abandoned == 1)
        }

        /// The FIN arrives with the last bytes while the only server thread is busy, so epoll
        /// reports both at once: libmicrohttpd 0.9.75 alone would not notice the close until the
        /// idle timeout (see `ServerCore.clientClosedMidBody`).
        @Test func aCloseThatArrivesWithTheLastBytesIsNoticed() throws {
            let log = SinkLog()
            var handler = Self.handler(log: log, limit: 64 << 20)
            let inner = handler.onHandle
            handler.onHandle = { request, responder in
                // Holds the server's only thread (a test-only breach of "never block").
                if request.path == "/busy" { usleep(500_000) }
                inner(request, responder)
            }
            try withServer(threadCount: 1, handler: handler) { server in
                var upload: RawHTTPConnection? = try RawHTTPConnection(port: server.port)
                try upload?.send("POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
                try upload?.send(Data(repeating: 5, count: 1000))
                #expect(eventually { log.snapshot.bytes == 1000 })
                let busy = try RawHTTPConnection(port: server.port)
                try busy.send("GET /busy HTTP/1.1\r\nHost: x\r\n\r\n")
                usleep(100_000)  // the thread is in the busy handler now
                try upload?.send(Data(repeating: 6, count: 5000))
                upload = nil  // closes the socket
                #expect(try busy.readResponse().status == 200)
                #expect(eventually(within: 5) { log.snapshot.abandoned == 1 })
            }
            #expect(log.snapshot.bytes == 6000)
            #expect(log.snapshot.finished == 0)
        }

        @Test func aPreflightRefusalAbandonsTheSink() throws {
            let log = SinkLog()
            var handler = Self.handler(log: log, limit: 1 << 20)
            handler.onPreflight = { _ in HTTPResponse(status: 401, body: Data("no".utf8)) }
            try withServer(handler: handler) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let response = try connection.request("POST", "/sink", body: Data(repeating: 5, count: 1000))
                #expect(response.status == 401)
            }
            #expect(log.snapshot == SinkLog.Counts(writes: 0, bytes: 0, finished: 0, abandoned: 1))
        }

        @Test func stoppingTheServerAbandonsAnUploadInProgress() throws {
            let log = SinkLog()
            let connection: RawHTTPConnection
            do {
                let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, errorResponse: testErrorResponse)
                let server = HTTPServer(configuration: configuration, handler: Self.handler(log: log, limit: 1 << 20))
                try server.start()
                connection = try RawHTTPConnection(port: server.port)
                try connection.send("POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
                try connection.send(Data(repeating: 5, count: 1000))
                #expect(eventually { log.snapshot.bytes == 1000 })
                server.stop()
            }
            #expect(log.snapshot.finished == 0)
            #expect(log.snapshot.abandoned == 1)
            #expect(connection.readsEndOfStream())
        }
    }
}
