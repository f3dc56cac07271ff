import Dispatch
import FoundationEssentials
import Glibc
@testable import HTTPServer
import Synchronization
import Testing

/// A body that grows while answers follow it, as a running transfer's does: bytes are
/// appended (then it ends or fails) from the test's threads, and each `follower()` is one
/// answer's stream reading it from the start.
final class GrowingBody: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        /// `.end` or `.failed` once the body is over.
        var outcome: HTTPBodyStreamRead?
        var wakes: [ObjectIdentifier: @Sendable () -> Void] = [:]
        var followers: [Follower] = []

        mutating func takeWakes() -> [@Sendable () -> Void] {
            defer { wakes = [:] }
            return Array(wakes.values)
        }
    }
    private let state = Mutex(State())

    func append(_ bytes: [UInt8]) {
        let wakes = state.withLock { state in
            state.bytes += bytes
            return state.takeWakes()
        }
        wakes.forEach { $0() }
    }

    func finish() { end(.end) }
    func fail() { end(.failed) }

    private func end(_ outcome: HTTPBodyStreamRead) {
        let wakes = state.withLock { state in
            state.outcome = outcome
            return state.takeWakes()
        }
        wakes.forEach { $0() }
    }

    func follower() -> Follower {
        let follower = Follower(self)
        state.withLock { $0.followers.append(follower) }
        return follower
    }

    var followers: [Follower] { state.withLock { $0.followers } }
    /// Streams waiting for bytes (a wake kept).
    var waiting: Int { state.withLock { $0.wakes.count } }

    fileprivate func read(
        from offset: Int, into buffer: UnsafeMutableRawBufferPointer, id: ObjectIdentifier,
        wake: @escaping @Sendable () -> Void
    ) -> HTTPBodyStreamRead {
        state.withLock { state in
            if offset < state.bytes.count {
                let count = min(buffer.count, state.bytes.count - offset)
                state.bytes.withUnsafeBytes { source in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
                }
                return .bytes(count)
            }
            if let outcome = state.outcome { return outcome }
            state.wakes[id] = wake
            return .wait
        }
    }

    fileprivate func forget(_ id: ObjectIdentifier) {
        _ = state.withLock { $0.wakes.removeValue(forKey: id) }
    }
}

/// One answer's reader of a `GrowingBody`, counting its calls.
final class Follower: HTTPBodyStream {
    private struct Counts {
        var offset = 0
        var reads = 0
        var waits = 0
        var closes = 0
    }
    private let body: GrowingBody
    private let counts = Mutex(Counts())

    fileprivate init(_ body: GrowingBody) {
        self.body = body
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) -> HTTPBodyStreamRead {
        let offset = counts.withLock { $0.offset }
        let result = body.read(from: offset, into: buffer, id: ObjectIdentifier(self), wake: wake)
        counts.withLock { counts in
            counts.reads += 1
            if case .bytes(let count) = result { counts.offset += count }
            if case .wait = result { counts.waits += 1 }
        }
        return result
    }

    func close() {
        body.forget(ObjectIdentifier(self))
        counts.withLock { $0.closes += 1 }
    }

    var reads: Int { counts.withLock { $0.reads } }
    var waits: Int { counts.withLock { $0.waits } }
    var closes: Int { counts.withLock { $0.closes } }
}

/// Sends `total` bytes in pieces of 1 to `piece` bytes, each after a `.wait` whose wake comes
/// at once from the reading thread itself (before read returns), from another thread, or
/// from another thread a little later: the three ways a wake races the suspension.
final class SelfWakingStream: HTTPBodyStream {
    private struct State {
        var sent = 0
        var woken = false
        var waits = 0
        var closes = 0
    }
    let total: Int
    private let piece: Int
    private let state = Mutex(State())

    init(total: Int, piece: Int = 64) {
        self.total = total
        self.piece = piece
    }

    static func byte(at position: Int) -> UInt8 { UInt8(truncatingIfNeeded: position &* 31 &+ 7) }
    static func expected(_ total: Int) -> Data { Data((0..<total).map(byte(at:))) }

    func read(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) -> HTTPBodyStreamRead {
        let (result, way) = state.withLock { state -> (HTTPBodyStreamRead, Int) in
            if state.sent == total { return (.end, -1) }
            guard state.woken else {
                state.woken = true
                state.waits += 1
                return (.wait, state.waits % 3)
            }
            state.woken = false
            let count = min(buffer.count, total - state.sent, Int.random(in: 1...piece))
            for index in 0..<count { buffer[index] = Self.byte(at: state.sent + index) }
            state.sent += count
            return (.bytes(count), -1)
        }
        switch way {
        case 0: wake()
        case 1: DispatchQueue.global().async { wake() }
        case 2: DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...300))) { wake() }
        default: break
        }
        return result
    }

    func close() { state.withLock { $0.closes += 1 } }
    var waits: Int { state.withLock { $0.waits } }
    var closes: Int { state.withLock { $0.closes } }
}

/// `count` bytes of a pattern that differs from piece to piece.
func pattern(_ count: Int, seed: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ seed &* 101) }
}

extension LiveServerTests {
    /// Response bodies produced while they are sent (`HTTPResponse.Body.stream`).
    @Suite struct StreamedResponses {
        /// Answers every request with a new follower of `body` (`length` and `status` from
        /// the query), except /plain, answered "plain" from memory.
        static func handler(_ body: GrowingBody) -> ClosureHandler {
            ClosureHandler { request, responder in
                guard request.path != "/plain" else {
                    return responder.respond(HTTPResponse(status: 200, body: Data("plain".utf8)))
                }
                let length = request.query["length"].flatMap { Int($0) }
                let status = request.query["status"].flatMap { Int($0) } ?? 200
                responder.respond(HTTPResponse(status: status, body: .stream(body.follower(), length: length)))
            }
        }

        /// Appends `pieces` pieces of `size` bytes from another thread, pausing between them,
        /// then finishes (or fails); returns everything appended.
        @discardableResult
        static func feed(
            _ body: GrowingBody, pieces: Int, size: Int, pauseMicroseconds: UInt32 = 5_000, thenFail: Bool = false
        ) -> [UInt8] {
            let all = (0..<pieces).flatMap { pattern(size, seed: $0) }
            DispatchQueue.global().async {
                for index in 0..<pieces {
                    if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
                    body.append(Array(all[(index * size)..<((index + 1) * size)]))
                }
                if thenFail { body.fail() } else { body.finish() }
            }
            return all
        }

        @Test func chunkedBodyFedInPiecesArrivesWholeAsItComes() throws {
            let body = GrowingBody()
            try withServer(handler: Self.handler(body)) { server in
                let connection = try RawHTTPConnection(port: server.port)
                try connection.send("GET /follow HTTP/1.1\r\nHost: x\r\n\r\n")
                // The head is sent before any byte exists, and each piece as it comes.
                let (status, headers) = try connection.readResponseHead()
                #expect(status == 200)
                #expect(headers["Transfer-Encoding"]?.lowercased() == "chunked")
                #expect(headers["Content-Length"] == nil)
                #expect(eventually { body.waiting == 1 && server.suspendedStreamCount == 1 })
                body.append(Array("first".utf8))
                #expect(try connection.readChunk().map { String(decoding: $0, as: UTF8.self) } == "first")
                #expect(eventually { server.suspendedStreamCount == 1 })

                let rest = Self.feed(body, pieces: 40, size: 3000)
                var received = Data()
                while let chunk = try connection.readChunk() { received.append(chunk) }
                #expect(received == Data(rest))
                let follower = try #require(body.followers.first)
                #expect(follower.waits >= 2)
                #expect(eventually { follower.closes == 1 })
                #expect(eventually { server.suspendedStreamCount == 0 })
                // Keep-alive: the connection serves another request.
                #expect(try connection.request("GET", "/plain").text == "plain")
            }
        }

        @Test func knownLengthBodyIsSentWithContentLength() throws {
            let body = GrowingBody()
            try withServer(handler: Self.handler(body)) { server in
                let connection = try RawHTTPConnection(port: server.port)
                try connection.send("GET /follow?length=120000 HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(eventually { body.waiting == 1 })
                let all = Self.feed(body, pieces: 40, size: 3000)
                let response = try connection.readResponse()
                #expect(response.status == 200)
                #expect(response.headers["Content-Length"] == "120000")
                #expect(response.headers["Transfer-Encoding"] == nil)
                #expect(response.body == Data(all))
                #expect(eventually { body.followers.first?.closes == 1 })
                #expect(try connection.request("GET", "/plain").text == "plain")
                // Again on the same connection, chunked this time.
                try connection.send("GET /follow HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try connection.readResponse().body == Data(all))
                #expect(try connection.request("GET", "/plain").text == "plain")
                #expect(eventually { body.followers.allSatisfy { $0.closes == 1 } })
            }
        }

        @Test func severalClientsFollowOneBody() throws {
            let body = GrowingBody()
            try withServer(handler: Self.handler(body)) { server in
                let connections = try (0..<3).map { _ in try RawHTTPConnection(port: server.port) }
                for (index, connection) in connections.enumerated() {
                    try connection.send("GET /follow\(index == 2 ? "?length=300000" : "") HTTP/1.1\r\nHost: x\r\n\r\n")
                }
                #expect(eventually { body.waiting == 3 && server.suspendedStreamCount == 3 })
                let all = Self.feed(body, pieces: 100, size: 3000, pauseMicroseconds: 2_000)
                for connection in connections {
                    let response = try connection.readResponse()
                    #expect(response.body.count == all.count)
                    #expect(response.body == Data(all))
                }
                #expect(body.followers.count == 3)
                #expect(eventually { body.followers.allSatisfy { $0.closes == 1 } })
                #expect(eventually { server.suspendedStreamCount == 0 })
            }
        }

        /// A client that reads nothing holds up neither the body nor the clients that do read.
        @Test func aClientThatDoesNotReadHoldsUpNoOne() throws {
            let body = GrowingBody()
            try withServer(handler: Self.handler(body)) { server in
                let stalled = try RawHTTPConnection(port: server.port, timeout: 30)
                try stalled.send("GET /follow HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(eventually { body.waiting == 1 })
                let reader = try RawHTTPConnection(port: server.port)
                try reader.send("GET /follow HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(eventually { body.waiting == 2 })
                // 8 MiB: far more than the stalled connection's socket buffers hold.
                let all = Self.feed(body, pieces: 128, size: 64 << 10, pauseMicroseconds: 0)
                let response = try reader.readResponse()
                #expect(response.body == Data(all))
                // The stalled one still gets everything once it reads.
                #expect(try stalled.readResponse().body == Data(all))
                #expect(eventually { body.followers.allSatisfy { $0.closes == 1 } })
            }
        }

        @Test func failureMidwayIsAnErrorForTheClient() throws {
            let body = GrowingBody()
            try withServer(handler: Self.handler(body)) { server in
                let chunked = try RawHTTPConnection(port: server.port)
                try chunked.send("GET /follow HTTP/1.1\r\nHost: x\r\n\r\n")
                let sized = try RawHTTPConnection(port: server.port)
                try sized.send("GET /follow?length=1000000 HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(eventually { body.waiting == 2 })
                Self.feed(body, pieces: 10, size: 1000, thenFail: true)
                let chunkedError = #expect(throws: RawHTTPError.self) { try chunked.readResponse() }
                #expect(chunkedError?.description.contains("chunked body") == true)
                let sizedError = #expect(throws: RawHTTPError.self) { try sized.readResponse() }
                #expect(sizedError?.description.contains("of 1000000 body bytes") == true)
                #expect(eventually { body.followers.allSatisfy { $0.closes == 1 } })
                #expect(eventually { server.suspendedStreamCount == 0 })
            }
        }

        @Test func endBeforeTheLengthIsAnError() throws {
            let body = GrowingBody()
            try withServer(handler: Self.handler(body)) { server in
                let connection = try RawHTTPConnection(port: server.port)
                try connection.send("GET /follow?length=50000 HTTP/1.1\r\nHost: x\r\n\r\n")
                Self.feed(body, pieces: 10, size: 1000)
                let error = #expect(throws: RawHTTPError.self) { try connection.readResponse() }
                #expect(error?.description.contains("10000 of 50000") == true)
                #expect(eventually { body.followers.first?.closes == 1 })
            }
        }

        /// A suspended connection does not notice its client leaving; the next wake does.
        @Test func clientLeavingWhileSuspendedClosesTheStream() throws {
            let body = GrowingBody()
            try withServer(handler: Self.handler(body)) { server in
                var connection: RawHTTPConnection? = try RawHTTPConnection(port: server.port)
                try connection?.send("GET /follow HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(eventually { body.waiting == 1 && server.suspendedStreamCount == 1 })
                connection = nil
                let follower = try #require(body.followers.first)
                var piece = 0
                #expect(eventually {
                    piece += 1
                    body.append(pattern(1000, seed: piece))
                    return follower.closes == 1
                })
                #expect(eventually { server.suspendedStreamCount == 0 && body.waiting == 0 })
                // The server still answers.
                #expect(try RawHTTPConnection(port: server.port).request("GET", "/plain").text == "plain")
            }
        }

        @Test func stopWhileSuspendedEndsTheStreamPromptly() throws {
            let body = GrowingBody()
            let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, errorResponse: testErrorResponse)
            let server = HTTPServer(configuration: configuration, handler: Self.handler(body))
            try server.start()
            let connections = try (0..<3).map { index in
                let connection = try RawHTTPConnection(port: server.port)
                try connection.send("GET /follow\(index == 0 ? "?length=9999" : "") HTTP/1.1\r\nHost: x\r\n\r\n")
                return connection
            }
            body.append(pattern(100, seed: 1))
            #expect(eventually { body.waiting == 3 && server.suspendedStreamCount == 3 })

            let clock = ContinuousClock()
            let start = clock.now
            server.stop()
            let elapsed = clock.now - start
            // Well under the 2 s flush grace: the streams ended at once, not at a timeout.
            #expect(elapsed < .milliseconds(1500), "stop took \(elapsed)")
            #expect(server.suspendedStreamCount == 0)
            #expect(body.followers.allSatisfy { $0.closes == 1 })
            for connection in connections {
                #expect(throws: RawHTTPError.self) { try connection.readResponse() }
            }
            // Wakes after the end do nothing.
            body.append(pattern(100, seed: 2))
            body.finish()
        }

        /// The wake comes before read returned, while the connection is being suspended, or
        /// after: none may be lost (the client would time out) or resume twice.
        @Test func wakesRacingTheSuspensionAreNeverLost() throws {
            let streams = Mutex<[SelfWakingStream]>([])
            let handler = ClosureHandler { request, responder in
                let total = Int(request.query["total"] ?? "") ?? 0
                let stream = SelfWakingStream(total: total)
                streams.withLock { $0.append(stream) }
                let length = request.query["sized"] == nil ? nil : total
                responder.respond(HTTPResponse(status: 200, body: .stream(stream, length: length)))
            }
            try withServer(handler: handler) { server in
                let connections = try (0..<4).map { _ in try RawHTTPConnection(port: server.port) }
                var whole = 0
                for round in 0..<40 {
                    for (index, connection) in connections.enumerated() {
                        let sized = (round + index) % 2 == 0 ? "&sized" : ""
                        try connection.send("GET /race?total=\(1000 + round * 10 + index)\(sized) HTTP/1.1\r\nHost: x\r\n\r\n")
                    }
                    for (index, connection) in connections.enumerated() {
                        let response = try connection.readResponse()
                        if response.body == SelfWakingStream.expected(1000 + round * 10 + index) { whole += 1 }
                    }
                }
                #expect(whole == 160)
                let all = streams.withLock { $0 }
                #expect(all.count == 160)
                #expect(all.map(\.waits).reduce(0, +) > 160 * 20)
                #expect(eventually { all.allSatisfy { $0.closes == 1 } })
                #expect(eventually { server.suspendedStreamCount == 0 })
            }
        }

        /// HEAD and 304 send no body: nothing is read or suspended, and nothing stray (0.9.75
        /// sends a chunked answer's last chunk) follows the head. Without a length the
        /// connection closes after the head; with one it stays open.
        @Test func bodylessAnswersReadNothingAndCloseTheStream() throws {
            let body = GrowingBody()
            try withServer(handler: Self.handler(body)) { server in
                let connection = try RawHTTPConnection(port: server.port)
                let sized = try connection.request("HEAD", "/follow?length=777")
                #expect(sized.status == 200)
                #expect(sized.headers["Content-Length"] == "777")
                let notModified = try connection.request("GET", "/follow?length=777&status=304")
                #expect(notModified.status == 304)
                #expect(try connection.request("GET", "/plain").text == "plain")

                let chunked = try connection.request("HEAD", "/follow")
                #expect(chunked.status == 200)
                #expect(chunked.headers["Transfer-Encoding"] == nil)
                #expect(chunked.headers["Connection"]?.lowercased() == "close")
                #expect(connection.readsEndOfStream())

                let other = try RawHTTPConnection(port: server.port)
                #expect(try other.request("GET", "/follow?status=304").status == 304)
                #expect(other.readsEndOfStream())

                #expect(body.followers.count == 4)
                #expect(eventually { body.followers.allSatisfy { $0.closes == 1 } })
                #expect(body.followers.allSatisfy { $0.reads == 0 })
                #expect(body.waiting == 0)
                #expect(server.suspendedStreamCount == 0)
            }
        }

        /// A long-poll answered with a stream after its client left: the stream is closed
        /// once and the connection no longer counts as suspended (stop() would wait for it).
        @Test func streamAnsweringAHeldRequestWhoseClientLeftIsClosed() throws {
            let held = HeldResponders()
            let handler = ClosureHandler { _, responder in held.hold(responder) }
            try withServer(handler: handler) { server in
                var connection: RawHTTPConnection? = try RawHTTPConnection(port: server.port)
                try connection?.send("GET /poll HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(eventually { held.count == 1 && server.suspendedCount == 1 })
                connection = nil
                usleep(50_000)
                let stream = CountingStream()
                held.takeAll().forEach { $0.respond(HTTPResponse(status: 200, body: .stream(stream, length: nil))) }
                #expect(eventually { stream.closes == 1 })
                #expect(eventually { server.suspendedCount == 0 })
            }
        }
    }
}
