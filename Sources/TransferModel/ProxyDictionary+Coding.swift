internal import JSONModel

extension CodingUserInfoKey {
    /// Set to `true` on an encoder whose output is a stored record rather than an API answer:
    /// only then does a `ProxyDictionary` write its passwords.
    public static let includesSecrets = CodingUserInfoKey(rawValue: "transferd.includesSecrets")!
}

/// The JSON form: one flat object with Apple's keys, as `connectionProxyDictionary` is on
/// Apple's platforms. Decoding validates every key (422 naming the key on anything wrong).
extension ProxyDictionary: Codable {
    /// The three proxies' key prefixes, in the order errors are looked for. nonisolated(unsafe):
    /// a constant; key paths are immutable values but not marked Sendable.
    nonisolated(unsafe) static let kinds: [(prefix: String, path: WritableKeyPath<ProxyDictionary, ProxyServer>)] = [
        ("HTTP", \.http), ("HTTPS", \.https), ("SOCKS", \.socks),
    ]
    /// Keys macOS knows that are about other protocols or proxy auto-configuration.
    static let unsupportedPrefixes = ["FTP", "Gopher", "RTSP", "ProxyAutoConfig", "ProxyAutoDiscovery"]

    public init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        // Sorted: the first bad key reported is the same whatever the object's key order.
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            let field = decoder.path(key)
            let value = try container.decode(JSONValue.self, forKey: key)
            try set(key.stringValue, value, field: field)
        }
        for (prefix, path) in Self.kinds {
            let server = self[keyPath: path]
            if server.enabled == true && server.host == nil {
                throw InputError.invalidValue(field: decoder.path(AnyCodingKey(stringValue: prefix + "Proxy")), message: "is required when \(prefix)Enable is 1")
            }
            if server.enabled == true && server.port == nil {
                throw InputError.invalidValue(field: decoder.path(AnyCodingKey(stringValue: prefix + "Port")), message: "is required when \(prefix)Enable is 1")
            }
            if server.password != nil && server.username == nil {
                throw InputError.invalidValue(field: decoder.path(AnyCodingKey(stringValue: prefix + "ProxyUsername")), message: "is required when \(prefix)ProxyPassword is given")
            }
        }
    }

    /// Takes one key of the dictionary. Messages never repeat a credential's value.
    private mutating func set(_ key: String, _ value: JSONValue, field: String) throws {
        switch key {
        case "ExceptionsList":
            guard case .array(let items) = value else { throw InputError.invalidValue(field: field, message: "must be an array of host patterns") }
            exceptions = try items.enumerated().map { index, item in
                guard case .string(let pattern) = item else { throw InputError.invalidValue(field: "\(field)[\(index)]", message: "must be a string") }
                return try ProxyException(pattern, field: "\(field)[\(index)]")
            }
            return
        case "ExcludeSimpleHostnames":
            excludeSimpleHostnames = try Self.flag(value, field: field)
            return
        default:
            break
        }
        // The longest prefix first: "HTTPSProxy" is HTTPS's, not HTTP's "SProxy".
        for (prefix, path) in Self.kinds.sorted(by: { $0.prefix.count > $1.prefix.count }) where key.hasPrefix(prefix) {
            switch key.dropFirst(prefix.count) {
            case "Enable": self[keyPath: path].enabled = try Self.flag(value, field: field)
            case "Proxy": self[keyPath: path].host = try Self.host(value, field: field)
            case "Port": self[keyPath: path].port = try Self.port(value, field: field)
            case "ProxyUsername": self[keyPath: path].username = try Self.credential(value, field: field, isUsername: true)
            case "ProxyPassword": self[keyPath: path].password = try Self.credential(value, field: field, isUsername: false)
            default: continue
            }
            return
        }
        if Self.unsupportedPrefixes.contains(where: key.hasPrefix) {
            throw InputError.notImplemented(field: field, message: "only HTTP, HTTPS and SOCKS proxies are supported (no FTP, RTSP, Gopher or proxy auto-configuration)")
        }
        throw InputError.invalidValue(field: field, message: "is not a proxy key; known keys: HTTPEnable, HTTPProxy, HTTPPort, HTTPProxyUsername, HTTPProxyPassword, the same with HTTPS and SOCKS, ExceptionsList, ExcludeSimpleHostnames")
    }

    /// CFNetwork's flags are numbers (1 or 0); JSON booleans are taken too.
    private static func flag(_ value: JSONValue, field: String) throws -> Bool {
        switch value {
        case .bool(let on): return on
        case .integer(let number) where number == 0 || number == 1: return number == 1
        default: throw InputError.invalidValue(field: field, message: "must be 1, 0, true or false")
        }
    }

    private static func port(_ value: JSONValue, field: String) throws -> Int {
        guard case .integer(let number) = value, (1...65_535).contains(number) else {
            throw InputError.invalidValue(field: field, message: "must be an integer port between 1 and 65535")
        }
        return Int(number)
    }

    /// A host name or an IP address, without scheme, port or brackets.
    private static func host(_ value: JSONValue, field: String) throws -> String {
        guard case .string(let host) = value, !host.isEmpty, host.utf8.count <= 253 else {
            throw InputError.invalidValue(field: field, message: "must be a host name or an IP address")
        }
        if host.contains("://") || host.contains("/") {
            throw InputError.invalidValue(field: field, message: "must be the proxy's host alone (no scheme or path); its port goes in the Port key")
        }
        let isName = host.unicodeScalars.allSatisfy { $0.properties.isAlphabetic && $0.isASCII || ("0"..."9").contains($0) || "-._".unicodeScalars.contains($0) }
        guard isName || IPAddress(host) != nil else {
            throw InputError.invalidValue(field: field, message: "must be a host name or an IP address")
        }
        return host
    }

    /// Sent as given to the proxy; Basic cannot carry a ':' in a username (RFC 7617 2).
    private static func credential(_ value: JSONValue, field: String, isUsername: Bool) throws -> String {
        guard case .string(let text) = value, text.utf8.count <= 1024,
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw InputError.invalidValue(field: field, message: "must be a string of at most 1024 bytes without control characters")
        }
        if isUsername && (text.isEmpty || text.contains(":")) {
            throw InputError.invalidValue(field: field, message: "must not be empty or contain ':'")
        }
        return text
    }

    public func encode(to encoder: any Encoder) throws {
        let withSecrets = encoder.userInfo[.includesSecrets] as? Bool == true
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        func key(_ name: String) -> AnyCodingKey { AnyCodingKey(stringValue: name) }
        for (prefix, path) in Self.kinds {
            let server = self[keyPath: path]
            if let enabled = server.enabled { try container.encode(enabled ? 1 : 0, forKey: key(prefix + "Enable")) }
            if let host = server.host { try container.encode(host, forKey: key(prefix + "Proxy")) }
            if let port = server.port { try container.encode(port, forKey: key(prefix + "Port")) }
            if let username = server.username { try container.encode(username, forKey: key(prefix + "ProxyUsername")) }
            if withSecrets, let password = server.password { try container.encode(password, forKey: key(prefix + "ProxyPassword")) }
        }
        if !exceptions.isEmpty { try container.encode(exceptions.map(\.pattern), forKey: key("ExceptionsList")) }
        if let excludeSimpleHostnames { try container.encode(excludeSimpleHostnames ? 1 : 0, forKey: key("ExcludeSimpleHostnames")) }
    }
}
