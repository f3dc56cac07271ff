internal import Glibc

/// A connected TCP socket with a read buffer, owned by exactly one thread.
///
/// Not `Sendable`: the thread that reads and writes a connection is the only one that touches it,
/// and it closes the descriptor itself, so no other thread can race with a reused descriptor number.
/// Every wait is a `poll(2)` on the socket and, for the origin server, on a stop pipe, so
/// ``OriginServer/stop()`` wakes every blocked connection at once.
/// - SeeAlso: https://man7.org/linux/man-pages/man2/poll.2.html
final class SocketStream {
    /// The descriptor; -1 once closed.
    private(set) var fd: Int32
    /// Readable once the owner stops (the read end of the origin's stop pipe), or -1.
    private let stopFD: Int32
    /// Bytes received but not consumed yet.
    private(set) var buffer: [UInt8] = []
    /// Bytes received since the connection opened, consumed or not.
    private(set) var totalReceived = 0

    init(fd: Int32, stopFD: Int32 = -1) {
        self.fd = fd
        self.stopFD = stopFD
        var one: Int32 = 1
        // Small writes (a header block, a chunk) must leave now, not after a 40 ms Nagle delay.
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close()
    }

    // MARK: Waiting

    /// What a wait on the socket saw.
    enum Readiness {
        case ready
        case timedOut
    }

    /// Waits until the socket is ready for `events` (POLLIN or POLLOUT) or the deadline passes.
    /// Throws ``SocketError/stopped`` when the stop pipe becomes readable first.
    func wait(for events: Int32, until deadline: ContinuousClock.Instant?) throws -> Readiness {
        while true {
            var fds = [pollfd(fd: fd, events: Int16(events), revents: 0)]
            if stopFD >= 0 {
                fds.append(pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0))
            }
            let timeout = Self.pollTimeout(until: deadline)
            let result = poll(&fds, nfds_t(fds.count), timeout)
            if result < 0 {
                if errno == EINTR { continue }
                throw SocketError.lastError("poll")
            }
            if fds.count > 1, fds[1].revents != 0 {
                throw SocketError.stopped
            }
            if fds[0].revents != 0 {
                // POLLERR or POLLHUP count as ready: the next recv or send reports what happened.
                return .ready
            }
            if let deadline, ContinuousClock.now >= deadline {
                return .timedOut
            }
        }
    }

    /// Milliseconds until `deadline` for `poll(2)`, rounded up; -1 (forever) without a deadline.
    static func pollTimeout(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = ContinuousClock.now.duration(to: deadline)
        if remaining <= .zero { return 0 }
        return Int32(clamping: remaining.roundedUpMilliseconds)
    }

    // MARK: Reading

    /// Reads whatever is available into the buffer; returns the number of bytes read, 0 at end of stream.
    @discardableResult
    func fill(until deadline: ContinuousClock.Instant?) throws -> Int {
        while true {
            if try wait(for: Int32(POLLIN), until: deadline) == .timedOut {
                throw SocketError.timedOut
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = chunk.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT))
            }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw SocketError.lastError("recv")
            }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                totalReceived += count
            }
            return count
        }
    }

    /// Reads up to and including the blank line that ends an HTTP header block, and returns it
    /// without the final CRLFCRLF. Returns nil if the stream ended cleanly before any byte.
    func readHead(until deadline: ContinuousClock.Instant?, limit: Int = 64 * 1024) throws -> [UInt8]? {
        var searchFrom = 0
        while true {
            if let end = Self.find([13, 10, 13, 10], in: buffer, from: searchFrom) {
                let head = Array(buffer[0..<end])
                buffer.removeFirst(end + 4)
                return head
            }
            searchFrom = max(0, buffer.count - 3)
            if buffer.count > limit {
                throw SocketError.malformed("header block longer than \(limit) bytes")
            }
            if try fill(until: deadline) == 0 {
                if buffer.isEmpty { return nil }
                throw SocketError.peerClosed
            }
        }
    }

    /// Reads one CRLF-terminated line, without the CRLF.
    func readLine(until deadline: ContinuousClock.Instant?, limit: Int = 8 * 1024) throws -> [UInt8] {
        var searchFrom = 0
        while true {
            if let end = Self.find([13, 10], in: buffer, from: searchFrom) {
                let line = Array(buffer[0..<end])
                buffer.removeFirst(end + 2)
                return line
            }
            searchFrom = max(0, buffer.count - 1)
            if buffer.count > limit {
                throw SocketError.malformed("line longer than \(limit) bytes")
            }
            if try fill(until: deadline) == 0 {
                throw SocketError.peerClosed
            }
        }
    }

    /// Reads exactly `count` bytes.
    func read(exactly count: Int, until deadline: ContinuousClock.Instant?) throws -> [UInt8] {
        while buffer.count < count {
            if try fill(until: deadline) == 0 {
                throw SocketError.peerClosed
            }
        }
        let bytes = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Reads until the peer closes the stream.
    func readToEnd(until deadline: ContinuousClock.Instant?) throws -> [UInt8] {
        while try fill(until: deadline) > 0 {}
        let bytes = buffer
        buffer.removeAll()
        return bytes
    }

    /// True if the peer has closed or reset the connection, or sent bytes nobody asked for:
    /// either way the connection is no longer fit for the next request. Does not block.
    func isStale() -> Bool {
        guard fd >= 0 else { return true }
        if !buffer.isEmpty { return true }
        var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&probe, 1, 0)
        return ready != 0
    }

    // MARK: Writing

    /// Writes all of `bytes`, waiting for the socket to drain as needed.
    /// Uses `MSG_NOSIGNAL`: a write to a closed peer must return EPIPE, not kill the test process.
    /// - SeeAlso: https://man7.org/linux/man-pages/man2/send.2.html
    func write(_ bytes: some Collection<UInt8>, until deadline: ContinuousClock.Instant?) throws {
        let bytes = Array(bytes)
        var offset = 0
        while offset < bytes.count {
            if try wait(for: Int32(POLLOUT), until: deadline) == .timedOut {
                throw SocketError.timedOut
            }
            let sent = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw SocketError.lastError("send")
            }
            offset += sent
        }
    }

    // MARK: Closing

    /// Closes the descriptor (a FIN to the peer). Idempotent.
    func close() {
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
    }

    /// Closes with `SO_LINGER` set to zero seconds, so the kernel sends a RST instead of a FIN
    /// and the peer's next read fails with ECONNRESET.
    /// - SeeAlso: https://man7.org/linux/man-pages/man7/socket.7.html (SO_LINGER)
    func resetAndClose() {
        guard fd >= 0 else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    // MARK: Helpers

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] {
                var matched = true
                for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}

extension Duration {
    /// This duration in whole milliseconds, rounded up (poll(2) must not wake early).
    var roundedUpMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let millis = attoseconds / perMillisecond + (attoseconds % perMillisecond > 0 ? 1 : 0)
        return seconds * 1000 + millis
    }
}
