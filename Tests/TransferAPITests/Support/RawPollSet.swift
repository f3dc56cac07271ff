import Foundation
import Glibc

/// Many raw HTTP/1.1 connections that each sent one request, read back by one thread with
/// poll(2): holds a thousand long-polls from the test process without a thread per connection
/// (which would make the process's thread count meaningless), and timestamps each answer as it
/// completes.
///
/// `@unchecked Sendable`: the descriptors are created in `init`, then only `readAll` (one
/// caller) and `close` (after it) use them.
final class RawPollSet: @unchecked Sendable {
    struct Answer: Sendable {
        let status: Int
        let body: Data
        let arrival: ContinuousClock.Instant
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private var fds: [Int32] = []

    /// Opens `count` connections to 127.0.0.1:`port` and sends `request` on each.
    init(port: Int, count: Int, request: String) throws {
        let bytes = Array(request.utf8)
        do {
            for _ in 0..<count {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
                fds.append(fd)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(port).bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard connected == 0 else { throw Failure(description: "connect: errno \(errno)") }
                var sent = 0
                while sent < bytes.count {
                    let written = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard written > 0 else { throw Failure(description: "send: errno \(errno)") }
                    sent += written
                }
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        } catch {
            close()
            throw error
        }
    }

    var count: Int { fds.count }

    /// Reads one response per connection (Content-Length framed), until all have arrived or
    /// `timeout` seconds pass; nil for a connection that gave none. Calls `started` first.
    func readAll(timeout: Double, started: () -> Void = {}) -> [Answer?] {
        started()
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        var buffers = [[UInt8]](repeating: [], count: fds.count)
        var answers = [Answer?](repeating: nil, count: fds.count)
        var pending = Set(fds.indices)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while !pending.isEmpty, ContinuousClock.now < deadline {
            let order = Array(pending)
            var polls = order.map { pollfd(fd: fds[$0], events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polls, nfds_t(polls.count), 100)
            // When poll saw the bytes: the arrival time, before any parsing work of ours.
            let seen = ContinuousClock.now
            if ready <= 0 { continue }
            for (slot, entry) in polls.enumerated() where entry.revents != 0 {
                let index = order[slot]
                while true {
                    let received = chunk.withUnsafeMutableBytes { recv(fds[index], $0.baseAddress, $0.count, 0) }
                    if received > 0 {
                        buffers[index].append(contentsOf: chunk[0..<received])
                        continue
                    }
                    if received == 0 { pending.remove(index) }  // closed: whatever arrived is all
                    break
                }
                if let (status, body) = Self.parse(buffers[index]) {
                    answers[index] = Answer(status: status, body: body, arrival: seen)
                    pending.remove(index)
                }
            }
        }
        return answers
    }

    /// A complete response in `bytes`: its status and body, or nil if incomplete.
    static func parse(_ bytes: [UInt8]) -> (Int, Data)? {
        let separator: [UInt8] = [13, 10, 13, 10]
        // A plain byte scan: this runs for every answer, and an allocating search in a debug build
        // delayed later answers enough to distort the latency being measured.
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: {
            bytes[$0] == separator[0] && bytes[$0 + 1] == separator[1] && bytes[$0 + 2] == separator[2] && bytes[$0 + 3] == separator[3]
        }) else { return nil }
        let head = String(decoding: bytes[0..<end], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        var length = 0
        for line in lines.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == "content-length" {
                length = Int(pair[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        let bodyStart = end + 4
        guard bytes.count >= bodyStart + length else { return nil }
        return (status, Data(bytes[bodyStart..<(bodyStart + length)]))
    }

    func close() {
        for fd in fds { _ = Glibc.close(fd) }
        fds.removeAll()
    }

    deinit { close() }
}

/// Threads of this whole process (the test runner, the daemons it started, their pools).
func processThreadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
}
