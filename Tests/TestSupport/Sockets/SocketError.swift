internal import Glibc

/// Why a socket operation of the test helpers (``OriginServer``, ``TestHTTPClient``) failed.
public enum SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed; `errno` is the C error number it set.
    case system(call: String, errno: Int32)
    /// The deadline passed before the operation finished.
    case timedOut
    /// The peer closed the connection before the message was complete.
    case peerClosed
    /// The owner stopped (``OriginServer/stop()``) while the operation waited.
    case stopped
    /// The bytes received are not HTTP/1.1 as the helpers understand it.
    case malformed(String)

    public var description: String {
        switch self {
        case .system(let call, let code):
            return "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .timedOut:
            return "timed out"
        case .peerClosed:
            return "connection closed by the peer"
        case .stopped:
            return "stopped"
        case .malformed(let reason):
            return "malformed HTTP message: \(reason)"
        }
    }

    /// The peer went away (closed or reset): a kept-alive connection may simply have gone stale.
    var isConnectionLoss: Bool {
        switch self {
        case .peerClosed:
            return true
        case .system(_, let code):
            return code == ECONNRESET || code == EPIPE || code == ECONNABORTED
        default:
            return false
        }
    }

    /// The error for a failed C call, read from `errno` right after it.
    static func lastError(_ call: String) -> SocketError {
        .system(call: call, errno: errno)
    }
}
