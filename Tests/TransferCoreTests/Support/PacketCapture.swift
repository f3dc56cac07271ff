import Foundation
import TestSupport

/// tcpdump on the loopback interface, as a child process of the test: started by `init` (which
/// returns once tcpdump says it is listening), stopped by `stop()` by its PID, bounded in
/// packets and time. We run as root, so it may capture. A missing tcpdump is an error, not a
/// skip: scripts/test.sh installs it.
final class PacketCapture {
    /// One captured packet: the TOS byte (IPv4) or traffic class (IPv6), and its destination port.
    struct Packet: CustomStringConvertible {
        let trafficClass: Int
        let destinationPort: Int
        var description: String { "0x\(String(trafficClass, radix: 16)) -> :\(destinationPort)" }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let process = Process()
    private let folder: TempDirectory
    private var output: String { folder.path + "/tcpdump.out" }
    private var errors: String { folder.path + "/tcpdump.err" }

    /// Captures TCP packets sent *to* any of `ports` on `lo` (client to server only: what our
    /// sockets sent), at most `limit` of them.
    init(destinationPorts ports: [Int], limit: Int = 500) throws {
        let candidates = ["/usr/bin/tcpdump", "/usr/sbin/tcpdump", "/sbin/tcpdump"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "tcpdump is not installed (apt-get install tcpdump; scripts/test.sh does it): the DSCP marks cannot be checked on the wire")
        }
        folder = try TempDirectory(prefix: "transferd-capture")
        FileManager.default.createFile(atPath: folder.path + "/tcpdump.out", contents: nil)
        FileManager.default.createFile(atPath: folder.path + "/tcpdump.err", contents: nil)
        process.executableURL = URL(fileURLWithPath: path)
        let filter = "tcp and (" + ports.map { "dst port \($0)" }.joined(separator: " or ") + ")"
        // -l: line-buffered, so what was captured is in the file when it is stopped.
        process.arguments = ["-i", "lo", "-n", "-v", "-l", "-c", String(limit), filter]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.path + "/tcpdump.out"))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.path + "/tcpdump.err"))
        try process.run()
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if (try? String(contentsOfFile: errors, encoding: .utf8))?.contains("listening on") == true { return }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        stop()
        throw Failure(description: "tcpdump did not start capturing on lo within 5 s: \(said)")
    }

    deinit {
        stop()
        folder.remove()
    }

    /// Stops tcpdump (SIGTERM to its PID; it flushes and exits) and waits up to 5 s for it.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Stops the capture and parses what it saw. `tcpdump -v` prints `IP (tos 0x20, ...)` with
    /// the addresses on the next line for IPv4, and `IP6 (class 0xb8, ...) src > dst: ...` on
    /// one line for IPv6 (no `class` when it is 0).
    func packets() -> [Packet] {
        stop()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        var records: [String] = []
        for line in text.split(separator: "\n") {
            if line.first == " " || line.first == "\t", !records.isEmpty { records[records.count - 1] += " " + line } else { records.append(String(line)) }
        }
        return records.compactMap { record in
            guard let port = Self.destinationPort(record) else { return nil }
            let value = Self.hex(after: record.contains(" IP6 ") || record.hasPrefix("IP6") ? "class 0x" : "tos 0x", in: record) ?? 0
            return Packet(trafficClass: value, destinationPort: port)
        }
    }

    var rawOutput: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    private static func hex(after marker: String, in record: String) -> Int? {
        guard let range = record.range(of: marker) else { return nil }
        return Int(record[range.upperBound...].prefix { $0.isHexDigit }, radix: 16)
    }

    /// The port of "dst.port" in "src.port > dst.port: Flags ..." (an IPv6 address has colons,
    /// so the end is ": ").
    private static func destinationPort(_ record: String) -> Int? {
        guard let arrow = record.range(of: " > ") else { return nil }
        let rest = record[arrow.upperBound...]
        guard let end = rest.range(of: ": ") else { return nil }
        let address = rest[..<end.lowerBound]
        guard let dot = address.lastIndex(of: ".") else { return nil }
        return Int(address[address.index(after: dot)...])
    }
}
