/// Where a stream task connects: host, port, and whether TLS starts with the connection. Kept in
/// the task's `originalRequest.url` as `tcp://host:port` or `tls://host:port` (an IPv6 literal
/// in brackets), so a task created suspended can be started later from its record alone.
public struct StreamEndpoint: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// The host as it goes in a URL: an IPv6 literal in brackets.
    package var urlHost: String { host.contains(":") ? "[\(host)]" : host }

    /// `tcp://host:port` or `tls://host:port`.
    public var url: String { "\(tls ? "tls" : "tcp")://\(urlHost):\(port)" }

    /// Reads back `url`; nil for anything else.
    public init?(url: String) {
        let tls: Bool
        if url.hasPrefix("tcp://") { tls = false } else if url.hasPrefix("tls://") { tls = true } else { return nil }
        let rest = url.dropFirst(6)
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) else { return nil }
        var host = rest[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { return nil }
        self.init(host: String(host), port: port, tls: tls)
    }
}
