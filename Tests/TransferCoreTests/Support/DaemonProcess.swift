import Foundation
import Glibc
import TestSupport
import Testing

/// The real `transferd` executable run as a child process: started on port 0, its port read from
/// its "transferd listening" log line (`http.port=NNNN`), its output collected, its exit awaited.
final class DaemonProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is configured before `run()` and only read afterwards
    // (pid, status), which Foundation allows from any thread; `output` guards itself.
    let process: Process
    let output: ProcessOutput
    private(set) var port = 0
    /// Milliseconds from launch to the first `GET /healthz` answered 200.
    private(set) var startMilliseconds = 0.0

    var pid: Int32 { process.processIdentifier }

    /// Launches `transferd --listen 127.0.0.1:0 --data-dir DIR` (plus `arguments`) and waits until
    /// it answers `/healthz`.
    static func start(dataDirectory: String, arguments: [String] = [], environment: [String: String] = [:]) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0", "--data-dir", dataDirectory] + arguments, environment: environment)
        let launched = ContinuousClock.now
        try daemon.process.run()
        do {
            let line = try await daemon.output.waitForLine(containing: "transferd listening", timeout: 20)
            guard let range = line.range(of: #"http\.port=(\d+)"#, options: .regularExpression),
                  let port = Int(line[range].dropFirst("http.port=".count)), port > 0 else {
                throw DaemonFailure("no http.port in the listening line: \(line)")
            }
            daemon.port = port
            let health = try await TestHTTPClient(port: port).sendAsync("GET", "/healthz", timeout: 10)
            guard health.status == 200 else { throw DaemonFailure("/healthz answered \(health)") }
            daemon.startMilliseconds = milliseconds(since: launched)
            return daemon
        } catch {
            daemon.kill(SIGKILL)
            _ = await daemon.waitForExit(timeout: 5)
            throw DaemonFailure("transferd did not start: \(error)\nstderr:\n\(daemon.output.stderr)")
        }
    }

    /// Runs `transferd ARGUMENTS` to completion (a CLI check): its exit status and output.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 20) async throws -> (status: Int32, exited: Bool, stdout: String, stderr: String) {
        let child = try DaemonProcess(arguments: arguments, environment: environment)
        try child.process.run()
        guard let status = await child.waitForExit(timeout: timeout) else {
            child.kill(SIGKILL)
            _ = await child.waitForExit(timeout: 5)
            throw DaemonFailure("transferd \(arguments) did not exit within \(timeout) s; stderr:\n\(child.output.stderr)")
        }
        await child.output.waitForEnd()
        return (status, child.process.terminationReason == .exit, child.output.stdout, child.output.stderr)
    }

    private init(arguments: [String], environment: [String: String]) throws {
        process = Process()
        process.executableURL = try Self.executable()
        process.arguments = arguments
        // Only what the test gives: no TRANSFERD_* of the surrounding shell leaks in.
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TRANSFERD_") }
        env.merge(environment) { $1 }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        output = ProcessOutput()
        process.standardOutput = output.stdoutPipe
        process.standardError = output.stderrPipe
        let output = self.output
        process.terminationHandler = { process in output.exited(process.terminationStatus) }
    }

    func kill(_ signal: Int32) {
        _ = Glibc.kill(pid, signal)
    }

    /// SIGTERM, then waits until the process is gone (SIGKILL after `seconds`). For a `defer`
    /// placed after the one that removes the daemon's folder (so it runs first): a daemon still
    /// shutting down wrote its database and folders back while the folder was being removed,
    /// and left them in /tmp.
    func terminate(within seconds: Double = 10) {
        kill(SIGTERM)
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning {
            kill(SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The exit status (the signal number when killed by one), or nil if it is still running
    /// after `timeout` seconds.
    func waitForExit(timeout: Double) async -> Int32? {
        await output.waitForExit(timeout: timeout)
    }

    /// `transferd` next to the test bundle (the same build folder, whatever its scratch path),
    /// else in a build folder of the package.
    static func executable() throws -> URL {
        let fileManager = FileManager.default
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["TRANSFERD_TEST_EXECUTABLE"] {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        let bundleBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(bundleBinary.deletingLastPathComponent().appendingPathComponent("transferd"))
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("transferd"))
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("transferd"))
        }
        // Tests/TransferCoreTests/Support/DaemonProcess.swift -> the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let builds = ((try? fileManager.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { $0.hasPrefix(".build") }
            .map { root.appendingPathComponent($0).appendingPathComponent("debug").appendingPathComponent("transferd") }
            .filter { fileManager.isExecutableFile(atPath: $0.path) }
            .sorted { modified($0) > modified($1) }
        candidates += builds
        guard let found = candidates.first(where: { fileManager.isExecutableFile(atPath: $0.path) }) else {
            throw DaemonFailure("transferd not found; looked at \(candidates.map(\.path)). Build it with swift build --build-tests.")
        }
        return found
    }

    private static func modified(_ url: URL) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date) ?? .distantPast
    }
}

/// A child's stdout and stderr, read to the end on threads of their own, and its exit.
final class ProcessOutput: @unchecked Sendable {
    // @unchecked Sendable: every var is touched only with `condition` locked.
    let stdoutPipe = Pipe()
    let stderrPipe = Pipe()
    private let condition = NSCondition()
    private var out = Data()
    private var err = Data()
    private var openStreams = 2
    private var status: Int32?

    init() {
        read(stdoutPipe.fileHandleForReading, isStdout: true)
        read(stderrPipe.fileHandleForReading, isStdout: false)
    }

    private func read(_ handle: FileHandle, isStdout: Bool) {
        let thread = Thread { [self] in
            while true {
                let chunk = handle.availableData
                condition.lock()
                if chunk.isEmpty { openStreams -= 1 } else if isStdout { out.append(chunk) } else { err.append(chunk) }
                condition.broadcast()
                condition.unlock()
                if chunk.isEmpty { return }
            }
        }
        thread.name = "transferd output reader"
        thread.start()
    }

    var stdout: String { locked { String(decoding: out, as: UTF8.self) } }
    var stderr: String { locked { String(decoding: err, as: UTF8.self) } }

    func exited(_ status: Int32) {
        locked {
            self.status = status
            condition.broadcast()
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Blocks a thread of its own until `predicate` holds or `timeout` passes.
    private func wait<T: Sendable>(timeout: Double, _ predicate: @escaping @Sendable (ProcessOutput) -> T?) async -> T? {
        await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                let deadline = Date(timeIntervalSinceNow: timeout)
                condition.lock()
                var value = predicate(self)
                while value == nil, condition.wait(until: deadline) { value = predicate(self) }
                if value == nil { value = predicate(self) }
                condition.unlock()
                continuation.resume(returning: value)
            }
            thread.start()
        }
    }

    /// The first stderr line containing `text` (the daemon logs to stderr).
    func waitForLine(containing text: String, timeout: Double) async throws -> String {
        let line = await wait(timeout: timeout) { output -> String? in
            if output.status != nil && output.openStreams == 0 { return "" }
            return String(decoding: output.err, as: UTF8.self).split(separator: "\n").first { $0.contains(text) }.map(String.init)
        }
        guard let line, !line.isEmpty else { throw DaemonFailure("no line containing \"\(text)\" within \(timeout) s") }
        return line
    }

    func waitForExit(timeout: Double) async -> Int32? {
        await wait(timeout: timeout) { $0.status }
    }

    /// Waits until both streams reached their end (after exit, to read everything).
    func waitForEnd() async {
        _ = await wait(timeout: 5) { $0.openStreams == 0 ? true : nil }
    }
}

struct DaemonFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func milliseconds(since start: ContinuousClock.Instant) -> Double {
    seconds(since: start) * 1000
}
