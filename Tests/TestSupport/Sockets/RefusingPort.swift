internal import Glibc
import Synchronization

/// A port on 127.0.0.1 that refuses every connection until ``close()``: bound, never listening.
///
/// A port that was merely free a moment ago (listened on, then closed) is what the kernel hands
/// the next listener of a test running in parallel, and then the "refused" connection succeeds.
/// Holding the port bound keeps it ours, and a SYN to a bound socket that does not listen is
/// answered with a reset at once, as for a host whose service is down.
public final class RefusingPort: Sendable {
    public let port: Int
    private let descriptor: Mutex<Int32?>

    public init() throws {
        let (fd, port) = try SocketFactory.listenOnLoopback(listening: false)
        self.port = port
        descriptor = Mutex(fd)
    }

    deinit { close() }

    /// `http://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Lets the port go (a server may then listen on it); a second call does nothing.
    public func close() {
        descriptor.withLock { fd in
            if let open = fd { _ = Glibc.close(open) }
            fd = nil
        }
    }
}
