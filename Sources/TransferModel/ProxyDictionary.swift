/// URLSessionConfiguration.connectionProxyDictionary, validated: Apple's CFNetwork keys for an
/// HTTP proxy (http URLs), an HTTPS proxy (https URLs, through a CONNECT tunnel) and a SOCKS5
/// proxy, their credentials, and the hosts that bypass them. Part of a session's configuration;
/// `route(for:)` decides, per request, which proxy a transfer uses.
///
/// JSON keys (CFNetwork's, plus the credentials, which are ours): `HTTPEnable`, `HTTPProxy`,
/// `HTTPPort`, `HTTPProxyUsername`, `HTTPProxyPassword`, the same with `HTTPS` and `SOCKS`,
/// `ExceptionsList` and `ExcludeSimpleHostnames`. Passwords are write-only: they are kept with
/// the session (its stored record) but never served (see `ProxyDictionary+Coding.swift`).
public struct ProxyDictionary: Sendable, Equatable {
    public var http = ProxyServer()
    public var https = ProxyServer()
    public var socks = ProxyServer()
    /// ExceptionsList: hosts and address ranges that connect directly.
    public var exceptions: [ProxyException] = []
    /// ExcludeSimpleHostnames: names without a dot ("localhost", "intranet") connect directly.
    public var excludeSimpleHostnames: Bool?

    public init() {}
}

/// One proxy of a `ProxyDictionary`, as given: every field is optional on input and served
/// back only when it was given (the password never).
public struct ProxyServer: Sendable, Equatable {
    public var enabled: Bool?
    public var host: String?
    public var port: Int?
    public var username: String?
    public var password: String?

    public init() {}

    /// Whether requests go through it: enabled, with a host and a port (decoding ensures both).
    var isUsable: Bool { enabled == true && host != nil && port != nil }
}
