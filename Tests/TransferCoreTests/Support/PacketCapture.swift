import Foundation
import TestSupport

/// tcpdump on the loopback interface, as a child process of the test: started by `init` (which
/// returns once tcpdump says it is listening), stopped by `stop()` by its PID, bounded in
/// packets and time. We run as root, so it may capture. A missing tcpdump is an error, not a
/// skip: scripts/test.sh installs it.
final class PacketCapture {
    /// One captured packet: the TOS byte (IPv4) or traffic class (IPv6), its destination port
    /// and its TCP payload's length.
    struct Packet: CustomStringConvertible {
        let trafficClass: Int
        let destinationPort: Int
        let payload: Int
        var description: String { "0x\(String(trafficClass, radix: 16)) -> :\(destinationPort), \(payload) bytes" }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let pid: pid_t
    private var running = true
    private let folder: TempDirectory
    private var output: String { folder.path + "/tcpdump.out" }
    private var errors: String { folder.path + "/tcpdump.err" }

    /// Captures TCP packets of one address family sent *to* any of `ports` on `lo` (client to
    /// server only: what our sockets sent), at most `limit` of them. The family matters: a test
    /// running beside this one may hold the same port number in the other family, and its
    /// unmarked packets were once counted as ours (an IPv6 check saw tos 0x0 among its own).
    init(destinationPorts ports: [Int], ipv6: Bool, limit: Int = 500) throws {
        let candidates = ["/usr/bin/tcpdump", "/usr/sbin/tcpdump", "/sbin/tcpdump"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "tcpdump is not installed (apt-get install tcpdump; scripts/test.sh does it): the DSCP marks cannot be checked on the wire")
        }
        folder = try TempDirectory(prefix: "transferd-capture")
        let filter = (ipv6 ? "ip6" : "ip") + " and tcp and (" + ports.map { "dst port \($0)" }.joined(separator: " or ") + ")"
        // -l: line-buffered; --immediate-mode: each packet is printed as it is seen, not when
        // a capture buffer fills or times out.
        pid = try Self.spawn(path, ["-i", "lo", "-n", "-v", "-l", "--immediate-mode", "-c", String(limit), filter],
                             stdout: folder.path + "/tcpdump.out", stderr: folder.path + "/tcpdump.err")
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if (try? String(contentsOfFile: errors, encoding: .utf8))?.contains("listening on") == true { return }
            if reap(blocking: false) { break }
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

    /// posix_spawn with an empty signal mask and default handlers: Foundation's Process passes
    /// on the test thread's mask, where SIGTERM is blocked, and tcpdump then never stops.
    private static func spawn(_ path: String, _ arguments: [String], stdout: String, stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard status == 0 else { throw Failure(description: "cannot start tcpdump: \(String(cString: strerror(status)))") }
        return pid
    }

    /// Whether the child has ended (and is reaped).
    private func reap(blocking: Bool) -> Bool {
        guard running else { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, blocking ? 0 : WNOHANG) == pid { running = false }
        return !running
    }

    /// Stops tcpdump by its PID (SIGTERM: it flushes and exits) and reaps it; should it not end
    /// within 5 s, SIGKILL.
    func stop() {
        guard running else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while !reap(blocking: false), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if running {
            kill(pid, SIGKILL)
            _ = reap(blocking: true)
        }
    }

    /// Stops the capture and parses what it saw. `tcpdump -v` prints `IP (tos 0x20, ...)` with
    /// the addresses on the next line for IPv4, and `IP6 (class 0xb8, ...) src > dst: ...` on
    /// one line for IPv6 (no `class` when it is 0).
    ///
    /// tcpdump reads what the kernel captured some time after the packets went out, and a stop
    /// loses what it has not read yet (seen on a loaded machine: a request's packet missing). So
    /// it first waits, up to `timeout` seconds, until the packets printed so far satisfy
    /// `complete`, and a moment longer for those right behind them.
    func packets(timeout: Double = 5, until complete: ([Packet]) -> Bool = { _ in true }) -> [Packet] {
        let deadline = Date().addingTimeInterval(timeout)
        while running, !complete(parse()), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        Thread.sleep(forTimeInterval: 0.1)
        stop()
        return parse()
    }

    private func parse() -> [Packet] {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        var records: [String] = []
        for line in text.split(separator: "\n") {
            if line.first == " " || line.first == "\t", !records.isEmpty { records[records.count - 1] += " " + line } else { records.append(String(line)) }
        }
        return records.compactMap { record in
            guard let port = Self.destinationPort(record) else { return nil }
            let value = Self.hex(after: record.contains(" IP6 ") || record.hasPrefix("IP6") ? "class 0x" : "tos 0x", in: record) ?? 0
            return Packet(trafficClass: value, destinationPort: port, payload: Self.payload(record) ?? 0)
        }
    }

    var rawOutput: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// The TCP line ends with ", length N" (N bytes of payload), after the IP header's lengths.
    private static func payload(_ record: String) -> Int? {
        guard let range = record.range(of: ", length ", options: .backwards) else { return nil }
        return Int(record[range.upperBound...].prefix { $0.isNumber })
    }

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
