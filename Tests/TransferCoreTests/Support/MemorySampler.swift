import Foundation

/// Samples another process's resident memory (VmRSS in /proc/PID/status) every `interval` on a
/// thread of its own, keeping the highest value seen, until `stop()`. With the kernel's own
/// high-water mark (VmHWM) it shows whether a daemon's memory stayed flat during a transfer.
final class MemorySampler: @unchecked Sendable {
    // @unchecked Sendable: `peak`, `samples` and `running` are touched only with `lock` held.
    private let pid: Int32
    private let interval: Double
    private let lock = NSCondition()
    private var peak = 0
    private var samples = 0
    private var running = true
    private var ended = false

    init(pid: Int32, interval: Double = 0.02) {
        self.pid = pid
        self.interval = interval
        let thread = Thread { [self] in run() }
        thread.name = "MemorySampler \(pid)"
        thread.start()
    }

    private func run() {
        while true {
            let rss = Self.field("VmRSS", of: pid)
            lock.lock()
            if let rss {
                peak = max(peak, rss)
                samples += 1
            }
            let carryOn = running && rss != nil
            if !carryOn {
                ended = true
                lock.broadcast()
            }
            lock.unlock()
            if !carryOn { return }
            Thread.sleep(forTimeInterval: interval)
        }
    }

    /// Stops sampling; returns the highest VmRSS seen, in KiB, and the number of samples.
    func stop() -> (peakKiB: Int, samples: Int) {
        lock.lock()
        defer { lock.unlock() }
        running = false
        while !ended { lock.wait() }
        return (peak, samples)
    }

    /// A "kB" field of /proc/PID/status (VmRSS, VmHWM), in KiB; nil once the process is gone.
    static func field(_ name: String, of pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }
}
