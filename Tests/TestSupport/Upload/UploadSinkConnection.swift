import Foundation
internal import Glibc

/// One accepted connection of an ``UploadSink``, owned by its own thread: reads each request's
/// body at the sink's pace, keeping the bytes as they arrive, and answers 201 once all came.
final class UploadSinkConnection {
    private let stream: SocketStream
    private let state: UploadSinkState

    init(fd: Int32, state: UploadSinkState) {
        stream = SocketStream(fd: fd, stopFD: state.listener.stopPipe.read)
        self.state = state
    }

    func run() {
        defer { stream.close() }  // `ServerThreads` counts the connection closed once this returns
        var current: Int?
        defer { if let current { state.end(current) } }  // cut: the client went away mid-body
        do {
            while let bytes = try stream.readHead(until: nil) {
                let head = try HTTPHead(parsing: bytes)
                let (method, target, _) = head.startLine
                let headers = head.headerDictionary
                let framing = try BodyFraming(headers: headers, fallback: .none)
                if HeaderLookup.value("Expect", in: headers)?.lowercased() == "100-continue" {
                    try stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), until: nil)
                }
                var declared: Int?
                if case .length(let count) = framing { declared = count }
                let index = state.begin(method: method, path: target, declaredLength: declared)
                current = index
                guard try receiveBody(framing, into: index) else { return }
                current = nil
                state.finish(index)
                try answer(201, close: false)
            }
        } catch {
            // The client went away or the sink stopped.
        }
    }

    /// Reads a body by its framing (a client-streamed body comes chunked); false if the client
    /// closed first.
    private func receiveBody(_ framing: BodyFraming, into index: Int) throws -> Bool {
        switch framing {
        case .length(let count):
            return try receive(count, into: index)
        case .chunked:
            while true {
                let line = String(decoding: try stream.readLine(until: nil), as: UTF8.self)
                guard let size = Int(line.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "", radix: 16), size >= 0 else {
                    throw SocketError.malformed("bad chunk size \(line.debugDescription)")
                }
                if size == 0 {
                    while try !stream.readLine(until: nil).isEmpty {}
                    return true
                }
                guard try receive(size, into: index) else { return false }
                _ = try stream.readLine(until: nil)
            }
        case .none, .untilClose:
            return true
        }
    }

    /// Reads `length` body bytes at the sink's pace; false if the client closed first.
    private func receive(_ length: Int, into index: Int) throws -> Bool {
        var kept = 0
        var started = ContinuousClock.now
        var pacedFrom = 0
        var pace = state.locked { $0.bytesPerSecond }
        while kept < length {
            // A dead client's last bytes may still sit in the kernel: a real server behind a
            // slow disk would not have them either, and draining them would race its successor.
            if pace != nil, peerHasClosed() { return false }
            if stream.buffer.isEmpty, try stream.fill(until: nil) == 0 { return false }
            // At most 16 KiB a step, so a throttled body is kept as it trickles in.
            let take = min(stream.buffer.count, length - kept, pace == nil ? Int.max : 16 * 1024)
            state.append(stream.buffer[0..<take], to: index)
            _ = try stream.read(exactly: take, until: nil)
            kept += take
            let now = state.locked { $0.bytesPerSecond }
            if now != pace {
                pace = now
                started = ContinuousClock.now
                pacedFrom = kept
            }
            if let rate = pace, rate > 0 {
                let due = started + .milliseconds(Int64(kept - pacedFrom) * 1000 / Int64(rate))
                let remaining = ContinuousClock.now.duration(to: due)
                if remaining > .zero { Thread.sleep(forTimeInterval: Double(remaining.roundedUpMilliseconds) / 1000) }
            }
        }
        return true
    }

    private func answer(_ status: Int, close: Bool) throws {
        var text = "HTTP/1.1 \(status) \(OriginConnection.reasonPhrase(status))\r\nContent-Length: 0\r\n"
        if close { text += "Connection: close\r\n" }
        text += "\r\n"
        try stream.write(Array(text.utf8), until: nil)
    }

    /// Whether the client has closed its side (POLLRDHUP, 0x2000 on Linux, not exported to Swift).
    private func peerHasClosed() -> Bool {
        var probe = pollfd(fd: stream.fd, events: Int16(0x2000), revents: 0)
        return poll(&probe, 1, 0) > 0
    }
}
