/// The proxy one request goes through, as decided by `ProxyDictionary.route(scheme:host:)`.
public struct ProxyRoute: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// An HTTP proxy: absolute-form requests for http URLs, a CONNECT tunnel for https.
        case http
        /// SOCKS5, the proxy resolving the name (curl's socks5h).
        case socks5
    }

    public var kind: Kind
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?

    /// The proxy as a URL, `http://host:port` or `socks5h://host:port` (the SOCKS proxy resolves
    /// names), as proxy settings are written everywhere; an IPv6 address goes in brackets.
    public var url: String {
        let address = host.contains(":") ? "[\(host)]" : host
        return (kind == .http ? "http://" : "socks5h://") + address + ":" + String(port)
    }
}

extension ProxyDictionary {
    /// The proxy a request for `scheme://host` goes through, nil to connect directly.
    /// The scheme's own proxy comes first (HTTPEnable for http, HTTPSEnable for https); SOCKS
    /// carries what the scheme's proxy does not. Exceptions and ExcludeSimpleHostnames bypass all.
    public func route(scheme: String, host rawHost: String) -> ProxyRoute? {
        var host = rawHost.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        let address = IPAddress(host)
        if address == nil, excludeSimpleHostnames == true, !host.contains(".") { return nil }
        if exceptions.contains(where: { $0.matches(host: host, address: address) }) { return nil }
        let own: ProxyServer? = switch scheme.lowercased() {
        case "http": http
        case "https": https
        default: nil
        }
        if let own, own.isUsable { return Self.route(.http, own) }
        if socks.isUsable { return Self.route(.socks5, socks) }
        return nil
    }

    private static func route(_ kind: ProxyRoute.Kind, _ server: ProxyServer) -> ProxyRoute? {
        guard let host = server.host, let port = server.port else { return nil }
        return ProxyRoute(kind: kind, host: host, port: port, username: server.username, password: server.password)
    }
}

/// Never prints a password (a route may end up in a log line or a test failure).
extension ProxyRoute: CustomStringConvertible {
    public var description: String {
        url + (username == nil ? "" : " (user \(username!), password hidden)")
    }
}

extension ProxyServer: CustomStringConvertible {
    public var description: String {
        "ProxyServer(enabled: \(enabled.map(String.init) ?? "nil"), host: \(host ?? "nil"), port: \(port.map(String.init) ?? "nil"), username: \(username ?? "nil"), password: \(password == nil ? "nil" : "hidden"))"
    }
}
