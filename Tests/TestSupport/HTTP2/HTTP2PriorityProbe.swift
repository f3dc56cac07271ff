internal import Foundation
internal import Glibc
internal import Synchronization

/// An h2c server on 127.0.0.1 (prior knowledge only, RFC 9113 3.3) that records the priority a
/// client gives each stream and never answers a request: what the tests of HTTP/2 stream
/// weights read off the wire. It speaks just enough h2 to keep a client talking: its own empty
/// SETTINGS, an ACK for the client's, a PING every 100 ms (so a client with nothing to send
/// still reads, and sends what it has pending, such as a PRIORITY frame). One thread per
/// connection; `stop()` wakes and ends them all.
///
/// RFC 9113 deprecates the RFC 7540 priority scheme, but a client may still send it: weights
/// come in a HEADERS frame with the PRIORITY flag (0x20) and in PRIORITY frames (type 0x2), each
/// as one byte holding weight − 1.
public final class HTTP2PriorityProbe: Sendable {
    /// The weight a stream was given, in order of arrival.
    public struct StreamPriority: Sendable, Equatable, CustomStringConvertible {
        /// Which connection it came on: 0 for the first accepted, and so on.
        public let connection: Int
        public let streamId: Int
        /// 1 to 256; nil when a HEADERS frame carried no priority (the default, 16).
        public let weight: Int?
        public var description: String { "connection \(connection) stream \(streamId): \(weight.map(String.init) ?? "none")" }
    }

    private struct Recorded {
        var headers: [StreamPriority] = []
        var priorityFrames: [StreamPriority] = []
        var connections = 0
    }

    /// What every connection's thread records, behind one lock (a class, so threads share it).
    private final class Recorder: Sendable {
        let state = Mutex(Recorded())
        func withLock<T>(_ body: (inout Recorded) -> T) -> T { state.withLock { body(&$0) } }
    }

    private let listener: LoopbackListener
    private let recorded = Recorder()

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(listener.port)" }

    /// Starts listening at once.
    public init() throws {
        listener = try LoopbackListener()
        let listener = self.listener, recorded = self.recorded
        Thread {
            listener.acceptConnections { fd in
                let connection = recorded.withLock { state in
                    defer { state.connections += 1 }
                    return state.connections
                }
                Thread { Self.serve(fd, connection: connection, stopFD: listener.stopPipe.read, recorded: recorded) }.start()
                return true
            }
        }.start()
    }

    deinit { listener.signalStop() }

    /// Every stream's HEADERS so far.
    public var streams: [StreamPriority] { recorded.withLock { $0.headers } }
    /// Every PRIORITY frame so far (a priority changed after the stream opened).
    public var priorityUpdates: [StreamPriority] { recorded.withLock { $0.priorityFrames } }
    /// Connections accepted so far.
    public var connections: Int { recorded.withLock { $0.connections } }

    /// Waits (up to `timeout` seconds) until `predicate` holds for the streams and PRIORITY
    /// frames; returns whether it did.
    public func wait(timeout: Double = 10, until predicate: ([StreamPriority], [StreamPriority]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (headers, updates) = recorded.withLock { ($0.headers, $0.priorityFrames) }
            if predicate(headers, updates) { return true }
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Closes the listener and every connection.
    public func stop() { listener.signalStop() }

    private static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// A frame: 24-bit length, type, flags, 31-bit stream id, payload (RFC 9113 4.1).
    private static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags,
                UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff)] + payload
    }

    /// Reads frames until the client goes or the probe stops; any error just ends the connection.
    private static func serve(_ fd: Int32, connection: Int, stopFD: Int32, recorded: Recorder) {
        let socket = SocketStream(fd: fd, stopFD: stopFD)
        defer { socket.close() }
        func soon() -> ContinuousClock.Instant { .now + .milliseconds(100) }
        do {
            guard try socket.read(exactly: preface.count, until: .now + .seconds(10)) == preface else { return }
            try socket.write(frame(type: 0x4), until: soon())  // our SETTINGS: all defaults
            while true {
                let head: [UInt8]
                do {
                    head = try socket.read(exactly: 9, until: soon())
                } catch SocketError.timedOut {
                    try socket.write(frame(type: 0x6, [UInt8](repeating: 0, count: 8)), until: soon())  // PING
                    continue
                }
                let length = Int(head[0]) << 16 | Int(head[1]) << 8 | Int(head[2])
                let (type, flags) = (head[3], head[4])
                let stream = Int(head[5] & 0x7f) << 24 | Int(head[6]) << 16 | Int(head[7]) << 8 | Int(head[8])
                let payload = try socket.read(exactly: length, until: .now + .seconds(10))
                switch type {
                case 0x1:  // HEADERS: [pad length if PADDED] [dependency, weight if PRIORITY] block
                    let start = flags & 0x8 != 0 ? 1 : 0
                    let weight = flags & 0x20 != 0 && payload.count >= start + 5 ? Int(payload[start + 4]) + 1 : nil
                    recorded.withLock { $0.headers.append(StreamPriority(connection: connection, streamId: stream, weight: weight)) }
                case 0x2 where payload.count == 5:  // PRIORITY: dependency, weight
                    recorded.withLock { $0.priorityFrames.append(StreamPriority(connection: connection, streamId: stream, weight: Int(payload[4]) + 1)) }
                case 0x4 where flags & 0x1 == 0:  // the client's SETTINGS: acknowledge
                    try socket.write(frame(type: 0x4, flags: 0x1), until: soon())
                case 0x6 where flags & 0x1 == 0:  // the client's PING: answer
                    try socket.write(frame(type: 0x6, flags: 0x1, payload), until: soon())
                case 0x7:  // GOAWAY
                    return
                default:
                    break
                }
            }
        } catch {
            return
        }
    }
}
