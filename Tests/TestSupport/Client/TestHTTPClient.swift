public import Foundation
internal import Synchronization

/// A small blocking HTTP/1.1 client for tests that talk to the daemon over a real socket.
///
/// It keeps one keep-alive connection and reconnects when the server has closed it: before
/// reusing the connection it checks that the server has not closed it, and a request that still
/// failed on it before any response byte arrived is sent once more on a fresh connection if it
/// never left or is idempotent. Requests on one client are serialised by a lock; for concurrent
/// requests use one client per thread or task. ``send(_:_:headers:body:timeout:)`` blocks the calling thread: from
/// async code prefer ``sendAsync(_:_:headers:body:timeout:)``, which blocks a thread of its own.
public final class TestHTTPClient: Sendable {
    public let host: String
    public let port: Int
    /// The kept-alive connection, if any; the lock is held for a whole exchange.
    private let connection = Mutex<SocketStream?>(nil)

    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    deinit {
        close()
    }

    /// Sends one request and reads the whole response.
    ///
    /// Adds `Host`, and `Content-Length` when `body` is given, unless `headers` has them.
    /// `timeout` (seconds) bounds the whole exchange; on timeout the connection is dropped and
    /// ``SocketError/timedOut`` thrown.
    public func send(
        _ method: String,
        _ path: String,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: Double = 30
    ) throws -> TestHTTPResponse {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        let request = encode(method, path, headers, body)
        return try connection.withLock { stream throws -> TestHTTPResponse in
            var attempt = 0
            while true {
                attempt += 1
                let current: SocketStream
                let fresh: Bool
                if let existing = stream, !existing.isStale() {
                    current = existing
                    fresh = false
                } else {
                    stream?.close()
                    stream = nil
                    current = SocketStream(fd: try SocketFactory.connect(host: host, port: port))
                    stream = current
                    fresh = true
                }
                let receivedBefore = current.totalReceived
                var written = false
                do {
                    try current.write(request, until: deadline)
                    written = true
                    let (response, keepAlive) = try Self.readResponse(from: current, method: method, until: deadline)
                    if !keepAlive {
                        current.close()
                        stream = nil
                    }
                    return response
                } catch let error as SocketError
                    where !fresh && attempt == 1 && error.isConnectionLoss && current.totalReceived == receivedBefore
                    && (!written || Self.idempotentMethods.contains(method)) {
                    // The server closed the kept-alive connection as we reused it: send once more
                    // on a new one, unless the server may have acted on a non-idempotent request
                    // (RFC 9110, section 9.2.2).
                    current.close()
                    stream = nil
                } catch {
                    current.close()
                    stream = nil
                    throw error
                }
            }
        }
    }

    private static let idempotentMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]

    /// ``send(_:_:headers:body:timeout:)`` on a thread of its own, so that the wait does not
    /// hold one of Swift concurrency's few threads.
    public func sendAsync(
        _ method: String,
        _ path: String,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: Double = 30
    ) async throws -> TestHTTPResponse {
        try await BlockingBridge.run { [self] in
            try send(method, path, headers: headers, body: body, timeout: timeout)
        }
    }

    /// Closes the kept-alive connection, if any; the next request opens a new one.
    public func close() {
        connection.withLock { stream in
            stream?.close()
            stream = nil
        }
    }

    /// Opens a connection, writes `bytes` as they are, and returns everything received until the
    /// server closes the connection or `timeout` (seconds) passes: for malformed-request tests.
    /// A reset after some bytes returns those bytes.
    public static func raw(host: String = "127.0.0.1", port: Int, bytes: Data, timeout: Double = 10) throws -> Data {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        let stream = SocketStream(fd: try SocketFactory.connect(host: host, port: port))
        defer { stream.close() }
        do {
            try stream.write(bytes, until: deadline)
        } catch let error as SocketError where error.isConnectionLoss {
            // The server may answer and close before reading everything: keep what it said.
        }
        do {
            while try stream.fill(until: deadline) > 0 {}
        } catch SocketError.timedOut {
            // Reading until the deadline is what was asked for.
        } catch let error as SocketError where error.isConnectionLoss {
            // A reset ends the exchange like a close does.
        }
        return Data(stream.buffer)
    }

    // MARK: Encoding and decoding

    private func encode(_ method: String, _ path: String, _ headers: [String: String], _ body: Data?) -> [UInt8] {
        var headers = headers
        if HeaderLookup.value("Host", in: headers) == nil {
            headers["Host"] = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
        if let body, HeaderLookup.value("Content-Length", in: headers) == nil,
           HeaderLookup.value("Transfer-Encoding", in: headers) == nil {
            headers["Content-Length"] = String(body.count)
        }
        var text = "\(method) \(path) HTTP/1.1\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8) + Array(body ?? Data())
    }

    /// Reads one final response (skipping 1xx); returns it and whether the connection stays usable.
    private static func readResponse(
        from stream: SocketStream,
        method: String,
        until deadline: ContinuousClock.Instant
    ) throws -> (TestHTTPResponse, keepAlive: Bool) {
        while true {
            guard let headBytes = try stream.readHead(until: deadline) else {
                throw SocketError.peerClosed
            }
            let head = try HTTPHead(parsing: headBytes)
            let (version, statusText, reason) = head.startLine
            guard version.hasPrefix("HTTP/1."), let status = Int(statusText) else {
                throw SocketError.malformed("bad status line \(version) \(statusText)")
            }
            if (100..<200).contains(status), status != 101 { continue }
            let headers = head.headerDictionary
            let framing: BodyFraming
            if method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) {
                framing = .none
            } else {
                framing = try BodyFraming(headers: headers, fallback: .untilClose)
            }
            let body = try stream.readBody(framing, until: deadline)
            let connectionHeader = HeaderLookup.value("Connection", in: headers)
            let keepAlive = framing != .untilClose
                && !HeaderLookup.contains(token: "close", in: connectionHeader)
                && (version != "HTTP/1.0" || HeaderLookup.contains(token: "keep-alive", in: connectionHeader))
            return (TestHTTPResponse(status: status, reason: reason, headers: headers, body: body), keepAlive)
        }
    }
}
