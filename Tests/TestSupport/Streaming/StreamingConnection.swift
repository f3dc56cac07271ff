import Foundation
internal import LibCrypto
internal import Glibc

/// One connection of a ``StreamingOrigin``, owned by its own thread: reads requests and answers
/// them (a generated body, paced; or an upload consumed and hashed) until either side closes or
/// the server stops. Not Sendable, like its socket.
final class StreamingConnection {
    private let stream: SocketStream
    private let state: StreamingOriginState
    /// One buffer for every body piece, sent or received.
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)

    init(fd: Int32, state: StreamingOriginState) {
        stream = SocketStream(fd: fd, stopFD: state.listener.stopPipe.read)
        self.state = state
    }

    deinit {
        buffer.deallocate()
    }

    func run() {
        defer { stream.close() }
        do {
            while let headBytes = try stream.readHead(until: nil) {
                let head = try HTTPHead(parsing: headBytes)
                let (method, target, _) = head.startLine
                let headers = head.headerDictionary
                let keepAlive: Bool
                switch method {
                case "GET", "HEAD": keepAlive = try serve(headers, bodyless: method == "HEAD")
                case "PUT", "POST": keepAlive = try consume(method, target, headers)
                default:
                    try send(head: "405 Method Not Allowed", ["Content-Length": "0", "Connection": "close"])
                    keepAlive = false
                }
                if !keepAlive || HeaderLookup.contains(token: "close", in: HeaderLookup.value("Connection", in: headers)) { return }
            }
        } catch {
            // The client went away (a killed daemon), or the server stopped.
        }
    }

    // MARK: Downloads

    /// Answers a GET or HEAD with the resource or the asked range of it; returns whether the
    /// connection can carry on.
    private func serve(_ headers: [String: String], bodyless: Bool) throws -> Bool {
        let resource = state.resource
        var fields = ["ETag": state.etag, "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"]
        let rangeHeader = HeaderLookup.value("Range", in: headers)
        let ifRange = HeaderLookup.value("If-Range", in: headers)
        var status = 200
        var range = 0..<resource.count
        if let rangeHeader, ifRange == nil || ifRange == state.etag {
            switch ByteRange.parse(rangeHeader, length: resource.count) {
            case .none: break
            case .unsatisfiable:
                _ = state.begin(ServedResponse(range: rangeHeader, status: 416, offset: 0, length: 0))
                try send(head: "416 Range Not Satisfiable", ["Content-Range": "bytes */\(resource.count)", "Content-Length": "0"])
                return true
            case .range(let asked):
                status = 206
                range = asked
                fields["Content-Range"] = "bytes \(asked.lowerBound)-\(asked.upperBound - 1)/\(resource.count)"
            }
        }
        fields["Content-Length"] = String(range.count)
        let index = state.begin(ServedResponse(range: rangeHeader, status: status, offset: range.lowerBound, length: bodyless ? 0 : range.count))
        try send(head: status == 200 ? "200 OK" : "206 Partial Content", fields)
        guard !bodyless else {
            state.sent(0, response: index, finished: true)
            return true
        }
        var pace = Pace()
        var offset = range.lowerBound
        while offset < range.upperBound {
            let rate = state.locked { $0.bytesPerSecond }
            // Paced: small pieces, each sent once the rate allows it; unpaced: 1 MiB pieces.
            let pieceSize = rate.map { max(1024, min($0 / 64, buffer.count)) } ?? buffer.count
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(pieceSize, range.upperBound - offset)])
            resource.fill(piece, from: offset)
            if let wait = pace.delay(before: offset - range.lowerBound, rate: rate) {
                // Woken early only by the stop pipe (throws) or an error on the socket, which the
                // next send reports.
                _ = try stream.wait(for: 0, until: .now + wait)
            }
            try write(UnsafeRawBufferPointer(piece)) { self.state.sent($0, response: index) }
            offset += piece.count
        }
        state.sent(0, response: index, finished: true)
        return true
    }

    /// Paces a body: bytes sent since the rate last changed stay within rate × time.
    private struct Pace {
        private var anchor = ContinuousClock.now
        private var anchorBytes = 0
        private var rate: Int?

        /// How long to wait before sending on from `sent` bytes, or nil to send now.
        mutating func delay(before sent: Int, rate: Int?) -> Duration? {
            if rate != self.rate {
                self.rate = rate
                anchor = .now
                anchorBytes = sent
            }
            guard let rate, rate > 0 else { return nil }
            let due = anchor + .nanoseconds(Int64(Double(sent - anchorBytes) / Double(rate) * 1e9))
            let now = ContinuousClock.now
            return due > now ? now.duration(to: due) : nil
        }
    }

    // MARK: Uploads

    /// Reads a request body by its Content-Length, hashing it as it comes, and answers 200 with
    /// `{"bytes": N, "sha256": "..."}`.
    private func consume(_ method: String, _ target: String, _ headers: [String: String]) throws -> Bool {
        guard let lengthText = HeaderLookup.value("Content-Length", in: headers), let length = Int(lengthText), length >= 0 else {
            try send(head: "411 Length Required", ["Content-Length": "0", "Connection": "close"])
            return false
        }
        if HeaderLookup.value("Expect", in: headers)?.lowercased() == "100-continue" {
            try stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), until: nil)
        }
        let index = state.begin(ReceivedUpload(method: method, path: target, contentLength: length))
        var hasher = StreamingHash(.sha256)
        var remaining = length
        // Whatever came in with the head first.
        let early = try stream.read(exactly: min(stream.buffer.count, remaining), until: nil)
        early.withUnsafeBytes { hasher.update($0) }
        remaining -= early.count
        state.received(early.count, upload: index)
        while remaining > 0 {
            _ = try stream.wait(for: Int32(POLLIN), until: nil)
            let count = recv(stream.fd, buffer.baseAddress, min(buffer.count, remaining), Int32(MSG_DONTWAIT))
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw SocketError.lastError("recv")
            }
            if count == 0 { throw SocketError.peerClosed }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            remaining -= count
            state.received(count, upload: index)
        }
        let digest = hexString(hasher.finalize())
        state.received(0, upload: index, sha256: digest)
        let body = Array(#"{"bytes": \#(length), "sha256": "\#(digest)"}"#.utf8)
        try send(head: "200 OK", ["Content-Type": "application/json", "Content-Length": String(body.count)])
        try stream.write(body, until: nil)
        return true
    }

    // MARK: Writing

    private func send(head status: String, _ fields: [String: String]) throws {
        var text = "HTTP/1.1 \(status)\r\n"
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        try stream.write(Array((text + "\r\n").utf8), until: nil)
    }

    /// Writes all of `bytes`, reporting each amount the kernel accepted.
    /// `MSG_NOSIGNAL`: a write to a killed peer must return EPIPE, not kill the test process.
    private func write(_ bytes: UnsafeRawBufferPointer, accepted: (Int) -> Void) throws {
        var offset = 0
        while offset < bytes.count {
            _ = try stream.wait(for: Int32(POLLOUT), until: nil)
            let count = Glibc.send(stream.fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw SocketError.lastError("send")
            }
            offset += count
            accepted(count)
        }
    }
}
