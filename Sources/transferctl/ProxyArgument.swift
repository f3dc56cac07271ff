internal import ArgumentParser
internal import JSONModel

/// `--proxy [SCHEME://][USER:PASSWORD@]HOST[:PORT]`, as curl takes it, turned into the session
/// configuration's `connectionProxyDictionary` (CFNetwork's keys): `http://` (the default) and
/// `https://` proxies carry both http and https requests, `socks5://` and `socks5h://` go
/// through SOCKS. The daemon, not transferctl, connects to it, so its network policy applies.
struct ProxyArgument: ExpressibleByArgument, Equatable {
    /// As given on the command line.
    var argument: String
    var kind: Kind
    var host: String
    var port: Int
    var user: String?
    var password: String?

    enum Kind: Equatable { case http, socks }

    init?(argument: String) {
        self.argument = argument
        var rest = Substring(argument)
        var scheme = "http"
        if let range = rest.firstRange(of: "://") {
            scheme = rest[..<range.lowerBound].lowercased()
            rest = rest[range.upperBound...]
        }
        switch scheme {
        case "http", "https": kind = .http
        case "socks5", "socks5h": kind = .socks
        default: return nil
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if let at = rest.lastIndex(of: "@") {
            let login = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = login.firstIndex(of: ":")
            user = APIClient.percentDecoded(String(login[..<(colon ?? login.endIndex)]))
            password = colon.map { APIClient.percentDecoded(String(login[login.index(after: $0)...])) }
        }
        // HOST, HOST:PORT, [V6] or [V6]:PORT.
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        } else {
            host = String(rest)
        }
        guard !host.isEmpty, !host.contains("/") else { return nil }
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { return nil }
            port = value
        } else {
            port = 1080  // curl's default for a proxy without a port
        }
    }

    /// The `connectionProxyDictionary` object.
    var dictionary: JSONValue {
        var entries: [String: JSONValue] = [:]
        let prefixes = kind == .socks ? ["SOCKS"] : ["HTTP", "HTTPS"]
        for prefix in prefixes {
            entries["\(prefix)Enable"] = .bool(true)
            entries["\(prefix)Proxy"] = .string(host)
            entries["\(prefix)Port"] = .integer(Int64(port))
            if let user { entries["\(prefix)ProxyUsername"] = .string(user) }
            if let password { entries["\(prefix)ProxyPassword"] = .string(password) }
        }
        return .object(entries)
    }
}
