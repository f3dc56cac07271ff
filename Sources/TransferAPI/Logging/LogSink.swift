internal import Glibc
internal import Synchronization

/// Where log lines go: standard error for the daemon, or a function (tests collect lines). One
/// lock serialises writers so lines of concurrent events never interleave. Shared by every
/// `LogfmtLogHandler` the executable makes.
public final class LogSink: Sendable {
    private let lock = Mutex(())
    private let output: @Sendable ([UInt8]) -> Void

    public init(_ output: @escaping @Sendable ([UInt8]) -> Void) { self.output = output }

    /// Standard error, written with write(2) until the whole line is out (or the descriptor fails).
    public static let standardError = LogSink { line in
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { return }
            }
        }
    }

    func write(_ line: [UInt8]) {
        lock.withLock { _ in output(line) }
    }
}
