/// The matching rules of RFC 6265 5.1.3 (domain-match) and 5.1.4 (paths).
enum CookieDomain {
    /// IPv4 in dotted digits, or IPv6 (a colon; URL hosts may keep the brackets).
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") || host.hasPrefix("[") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.utf8.allSatisfy { (48...57).contains($0) } }
    }

    /// `host` domain-matches `domain`: identical, or a name ending in "." + domain (never for an IP).
    static func matches(host: String, domain: String) -> Bool {
        if host == domain { return true }
        guard !isIPAddress(host), host.hasSuffix(domain) else { return false }
        return host.utf8.dropLast(domain.utf8.count).last == UInt8(ascii: ".")
    }

    /// The default-path of a request path: up to, not including, its last "/" ("/" when none).
    static func defaultPath(of requestPath: String) -> String {
        guard requestPath.hasPrefix("/"), let slash = requestPath.lastIndex(of: "/"), slash != requestPath.startIndex else { return "/" }
        return String(requestPath[..<slash])
    }

    /// `requestPath` path-matches `cookiePath`.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.utf8.count == cookiePath.utf8.count || cookiePath.hasSuffix("/")
            || requestPath.utf8.dropFirst(cookiePath.utf8.count).first == UInt8(ascii: "/")
    }
}
