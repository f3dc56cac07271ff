/// Why an `HTTPServer` could not start. Thrown by `HTTPServer.start()` to its caller.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `host` is not an IPv4 or IPv6 literal, or `port` is outside 0...65535.
    case invalidAddress(host: String, port: Int)
    /// The address could not be bound; `reason` is the system's explanation (strerror).
    case bindFailed(host: String, port: Int, reason: String)
    /// libmicrohttpd refused to start for a reason other than binding (threads, limits...).
    case startFailed(reason: String)
    /// `start()` was called on a server that is running or was stopped.
    case notStartable

    public var description: String {
        switch self {
        case let .invalidAddress(host, port):
            "cannot listen on \(host) port \(port): not an IPv4/IPv6 literal and port in 0...65535"
        case let .bindFailed(host, port, reason):
            "cannot listen on \(Self.display(host)):\(port): \(reason)"
        case let .startFailed(reason):
            "cannot start the HTTP server: \(reason)"
        case .notStartable:
            "the HTTP server was already started (a server starts at most once)"
        }
    }

    private static func display(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }
}
