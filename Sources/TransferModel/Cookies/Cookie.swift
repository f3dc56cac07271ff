public import FoundationEssentials

/// One stored cookie (RFC 6265 5.3's record): what a jar keeps and the cookie API serves, in
/// HTTPCookie's terms. Value type; `CookieJar` owns the collection.
public struct Cookie: Sendable, Equatable {
    public var name: String
    public var value: String
    /// Lowercased, without a leading dot (the canonical domain of RFC 6265 5.1.2).
    public var domain: String
    public var path: String
    /// Sent only to `domain` itself (no Domain attribute), not to its subdomains.
    public var isHostOnly: Bool
    /// nil: a session cookie, kept for the daemon's lifetime only.
    public var expiresDate: Date?
    public var isSecure: Bool
    public var isHTTPOnly: Bool
    public var sameSitePolicy: SameSitePolicy?
    public var createdAt: Date
    /// When it was last sent or set: the oldest go first when a jar is over its limits.
    public var lastAccessedAt: Date

    public init(name: String, value: String, domain: String, path: String = "/", isHostOnly: Bool = true,
                expiresDate: Date? = nil, isSecure: Bool = false, isHTTPOnly: Bool = false,
                sameSitePolicy: SameSitePolicy? = nil, createdAt: Date = Date()) {
        self.name = name
        self.value = value
        self.domain = domain
        self.path = path
        self.isHostOnly = isHostOnly
        self.expiresDate = expiresDate
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSitePolicy = sameSitePolicy
        self.createdAt = createdAt
        self.lastAccessedAt = createdAt
    }

    /// HTTPCookie.isSessionOnly.
    public var isSessionOnly: Bool { expiresDate == nil }

    /// What identifies a cookie in a jar: a new one with the same key replaces it (RFC 6265 5.3 step 11).
    public var key: Key { Key(name: name, domain: domain, path: path) }

    public struct Key: Hashable, Sendable {
        public var name: String
        public var domain: String
        public var path: String
    }

    func isExpired(at now: Date) -> Bool { expiresDate.map { $0 <= now } ?? false }

    /// The bytes the limits count: name and value (what browsers measure against 4096).
    var size: Int { name.utf8.count + value.utf8.count }
}

/// HTTPCookieStringPolicy (the SameSite attribute): kept and reported. Not enforced: a request
/// of this daemon has no browsing context to be cross-site from.
public enum SameSitePolicy: String, Codable, Sendable, CaseIterable {
    case lax, strict, none
}
