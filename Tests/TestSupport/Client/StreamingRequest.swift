public import Foundation

/// One request whose body the test writes piece by piece over a raw socket, so a body of any
/// size (1 GiB) never has to exist in memory, and so a test can stop half way (disconnect) or
/// read an early answer (413 from the head).
///
/// Owned by the thread that made it (not Sendable, like its socket). The head is sent by
/// `init`; the body goes out with `write` (raw with a Content-Length, or as one chunk each with
/// `chunked`); `finish` ends it and reads the answer; `close` drops the connection.
public final class StreamingRequest {
    private let stream: SocketStream
    private let chunked: Bool
    private let deadline: ContinuousClock.Instant

    /// Connects and sends the head: `Content-Length: contentLength`, or chunked when nil.
    /// `timeout` (seconds) bounds the whole exchange.
    public init(
        host: String = "127.0.0.1", port: Int, method: String = "POST", path: String,
        headers: [String: String] = [:], contentLength: Int?, timeout: Double = 120
    ) throws {
        deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        stream = SocketStream(fd: try SocketFactory.connect(host: host, port: port))
        chunked = contentLength == nil
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += contentLength.map { "Content-Length: \($0)\r\n" } ?? "Transfer-Encoding: chunked\r\n"
        try stream.write(Array((head + "\r\n").utf8), until: deadline)
    }

    deinit {
        stream.close()
    }

    /// Sends the next piece of the body (as one chunk when chunked; an empty piece is skipped).
    public func write(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        if chunked {
            try stream.write(Array("\(String(bytes.count, radix: 16))\r\n".utf8), until: deadline)
            try stream.write(bytes, until: deadline)
            try stream.write([13, 10], until: deadline)
        } else {
            try stream.write(bytes, until: deadline)
        }
    }

    /// Ends the body (the last chunk when chunked) and reads the response.
    public func finish() throws -> TestHTTPResponse {
        if chunked { try stream.write(Array("0\r\n\r\n".utf8), until: deadline) }
        return try readResponse()
    }

    /// Reads one final response (skipping 1xx), e.g. a refusal sent before the body.
    public func readResponse() throws -> TestHTTPResponse {
        while true {
            guard let headBytes = try stream.readHead(until: deadline) else { throw SocketError.peerClosed }
            let head = try HTTPHead(parsing: headBytes)
            let (_, statusText, reason) = head.startLine
            guard let status = Int(statusText) else { throw SocketError.malformed("bad status \(statusText)") }
            if (100..<200).contains(status) { continue }
            let headers = head.headerDictionary
            let body = try stream.readBody(try BodyFraming(headers: headers, fallback: .untilClose), until: deadline)
            return TestHTTPResponse(status: status, reason: reason, headers: headers, body: body)
        }
    }

    /// Drops the connection without ending the body (a client that went away).
    public func close() {
        stream.close()
    }
}
