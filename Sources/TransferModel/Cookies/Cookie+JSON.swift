internal import FoundationEssentials

/// A cookie as the API serves it, in HTTPCookie's terms: `domain` starts with "." for a cookie
/// its subdomains get too, and has none for a host-only cookie; `expiresDate` is null for a
/// session cookie.
extension Cookie: Encodable {
    enum CodingKeys: String, CodingKey {
        case name, value, domain, path, expiresDate, isSessionOnly, isSecure, isHTTPOnly, sameSitePolicy, createdAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(value, forKey: .value)
        try c.encode(isHostOnly ? domain : "." + domain, forKey: .domain)
        try c.encode(path, forKey: .path)
        try c.encode(NullEncoded(wrappedValue: expiresDate), forKey: .expiresDate)
        try c.encode(isSessionOnly, forKey: .isSessionOnly)
        try c.encode(isSecure, forKey: .isSecure)
        try c.encode(isHTTPOnly, forKey: .isHTTPOnly)
        try c.encode(NullEncoded(wrappedValue: sameSitePolicy), forKey: .sameSitePolicy)
        try c.encode(createdAt, forKey: .createdAt)
    }
}

/// The answer of the cookie routes that list: `{"cookies": [...]}`.
public struct CookieList: Encodable, Sendable {
    public let cookies: [Cookie]
    public init(_ cookies: [Cookie]) { self.cookies = cookies }
}
