import FoundationEssentials
import Glibc
import HTTPServer

/// Why a raw-socket exchange failed.
struct RawHTTPError: Error, CustomStringConvertible {
    let description: String
}

/// A response as read off the socket, byte for byte.
struct RawHTTPResponse {
    let status: Int
    let headers: HTTPHeaders
    let body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A minimal blocking HTTP/1.1 client over one TCP connection, for testing the server
/// without any HTTP library in between: requests are written as given, responses parsed
/// from the bytes (Content-Length or chunked bodies). Every read has a timeout so a failing
/// test fails instead of hanging. Owned by the test that opened it; not thread-safe.
final class RawHTTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host` (IPv4 or IPv6 literal) on `port`; reads time out after `timeout` seconds.
    init(host: String = "127.0.0.1", port: Int, timeout: Int = 10) throws {
        let isIPv6 = host.contains(":")
        fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError(description: "socket: \(Self.lastError())") }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let error = Self.lastError()
            Glibc.close(fd)
            throw RawHTTPError(description: "connect to \(host) port \(port): \(error)")
        }
    }

    deinit {
        Glibc.close(fd)
    }

    func send(_ text: String) throws {
        try send(Data(text.utf8))
    }

    func send(_ data: Data) throws {
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                // MSG_NOSIGNAL: a server that closed early must fail the test, not kill it.
                let sent = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw RawHTTPError(description: "send: \(Self.lastError())") }
                offset += sent
            }
        }
    }

    /// Sends a request with the given body (Content-Length set when a body is given).
    func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: Data? = nil
    ) throws -> RawHTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        try send(head + "\r\n")
        if let body, !body.isEmpty { try send(body) }
        return try readResponse(bodyless: method == "HEAD")
    }

    /// Reads one final response (skipping 1xx interim responses); `bodyless` for the answer
    /// to HEAD, whose framing headers announce a body that is not sent (as 204's and 304's).
    func readResponse(bodyless: Bool = false) throws -> RawHTTPResponse {
        while true {
            let (status, headers) = try readResponseHead()
            if status < 200 { continue }
            let body: Data
            if bodyless || status == 204 || status == 304 {
                body = Data()
            } else if headers["Transfer-Encoding"]?.lowercased() == "chunked" {
                body = try readChunkedBody()
            } else {
                body = try readExactly(Int(headers["Content-Length"] ?? "0") ?? 0)
            }
            return RawHTTPResponse(status: status, headers: headers, body: body)
        }
    }

    /// Reads a status line and header fields only, leaving the body to `readChunk()`.
    func readResponseHead() throws -> (status: Int, headers: HTTPHeaders) {
        let head = try readHead()
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw RawHTTPError(description: "bad status line: \(lines[0])")
        }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPError(description: "bad header: \(line)") }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            headers.add(name: String(line[..<colon]), value: String(value))
        }
        return (status, headers)
    }

    /// Reads the next chunk of a chunked body as it arrives; nil after the last chunk (and
    /// its trailer section).
    func readChunk() throws -> Data? {
        let sizeLine = try readLine()
        guard let size = Int(sizeLine.split(separator: ";", omittingEmptySubsequences: false)[0], radix: 16) else {
            throw RawHTTPError(description: "bad chunk size: \(sizeLine)")
        }
        if size == 0 {
            while try !readLine().isEmpty {}
            return nil
        }
        let chunk = try readExactly(size)
        guard try readLine().isEmpty else { throw RawHTTPError(description: "no CRLF after a \(size)-byte chunk") }
        return chunk
    }

    /// True if the peer closes the connection (EOF) within the read timeout with nothing
    /// more to read.
    func readsEndOfStream() -> Bool {
        guard buffer.isEmpty else { return false }
        return (try? fill()) == false
    }

    private func readHead() throws -> String {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let range = firstRange(of: separator) {
                let head = String(decoding: buffer[..<range], as: UTF8.self)
                buffer.removeSubrange(..<(range + 4))
                return head
            }
            guard try fill() else { throw RawHTTPError(description: "connection closed before a response head") }
        }
    }

    private func readChunkedBody() throws -> Data {
        var body = Data()
        while let chunk = try readChunk() {
            body.append(chunk)
        }
        return body
    }

    private func readLine() throws -> String {
        while true {
            if let end = firstRange(of: [13, 10]) {
                let line = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeSubrange(..<(end + 2))
                return line
            }
            guard try fill() else { throw RawHTTPError(description: "connection closed in a chunked body") }
        }
    }

    private func readExactly(_ count: Int) throws -> Data {
        while buffer.count < count {
            guard try fill() else { throw RawHTTPError(description: "connection closed after \(buffer.count) of \(count) body bytes") }
        }
        let data = Data(buffer[..<count])
        buffer.removeSubrange(..<count)
        return data
    }

    /// Reads what is available; false at end of stream. Throws on timeout or error.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = recv(fd, &chunk, chunk.count, 0)
        if count > 0 {
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
        if count == 0 { return false }
        if errno == ECONNRESET { return false }
        throw RawHTTPError(description: "recv: \(Self.lastError())")
    }

    private func firstRange(of pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for start in 0...(buffer.count - pattern.count) where buffer[start] == pattern[0] {
            if Array(buffer[start..<(start + pattern.count)]) == pattern { return start }
        }
        return nil
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}
