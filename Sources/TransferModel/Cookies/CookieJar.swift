package import FoundationEssentials

/// One cookie jar: the cookies one ephemeral session, or the default sessions of one owner,
/// see. A value type with RFC 6265's storage (5.3) and retrieval (5.4) rules, tested without
/// I/O; `CookieStorage` holds the jars under its lock and persists what changes.
package struct CookieJar: Sendable {
    /// RFC 6265 6.1's minimums, which browsers use as their limits.
    static let maximumCookieSize = 4096
    static let maximumPerDomain = 50
    static let maximumCookies = 3000

    private(set) var cookies: [Cookie.Key: Cookie] = [:]

    /// What a change did, for the persistent jar to write.
    package enum Change: Equatable {
        /// `replaced` is the cookie it took the place of, if any.
        case saved(Cookie, replaced: Cookie?)
        case removed(Cookie)
    }

    package init(_ cookies: [Cookie] = []) {
        for cookie in cookies { self.cookies[cookie.key] = cookie }
    }

    package var isEmpty: Bool { cookies.isEmpty }

    // MARK: storing (RFC 6265 5.3)

    /// The cookie a Set-Cookie line received from `url` makes, or nil when the line must be
    /// ignored: unparsable, too large, a Domain the host is not in or that is a public suffix,
    /// Secure over http, or a __Secure-/__Host- name without what its prefix promises.
    package static func cookie(from line: String, url: CookieRequestURL, suffixes: PublicSuffixList, now: Date) -> Cookie? {
        guard let parsed = SetCookie(line, now: now), parsed.name.utf8.count + parsed.value.utf8.count <= maximumCookieSize else { return nil }
        var domain = url.host
        var hostOnly = true
        if let attribute = parsed.domain.map(Punycode.asciiDomain) {
            if suffixes.isPublicSuffix(attribute) {
                // A public suffix is refused unless it is the host itself, which then gets a
                // host-only cookie (RFC 6265 5.3 step 5).
                guard attribute == url.host else { return nil }
            } else {
                guard CookieDomain.matches(host: url.host, domain: attribute) else { return nil }
                domain = attribute
                hostOnly = false
            }
        }
        // A secure cookie from an insecure origin could shadow the real one (RFC 6265bis 5.7).
        if parsed.isSecure && !url.isSecure { return nil }
        let path = parsed.path ?? CookieDomain.defaultPath(of: url.path)
        if parsed.name.hasPrefix("__Secure-") && !parsed.isSecure { return nil }
        if parsed.name.hasPrefix("__Host-") && !(parsed.isSecure && hostOnly && path == "/") { return nil }
        return Cookie(name: parsed.name, value: parsed.value, domain: domain, path: path, isHostOnly: hostOnly,
                      expiresDate: parsed.expires, isSecure: parsed.isSecure, isHTTPOnly: parsed.isHTTPOnly,
                      sameSitePolicy: parsed.sameSite, createdAt: now)
    }

    /// Stores `cookie`: it replaces the one with its name, domain and path (keeping that one's
    /// creation time, so its place in the Cookie header stays); an expired cookie only removes.
    /// Then expired cookies go, and the oldest (least recently used) beyond the limits.
    package mutating func insert(_ cookie: Cookie, now: Date) -> [Change] {
        var changes: [Change] = []
        var cookie = cookie
        let existing = cookies[cookie.key]
        if cookie.isExpired(at: now) {
            if let existing { cookies[cookie.key] = nil; changes.append(.removed(existing)) }
            return changes + removeExpired(now: now)
        }
        if let existing { cookie.createdAt = existing.createdAt }
        cookie.lastAccessedAt = now
        cookies[cookie.key] = cookie
        changes.append(.saved(cookie, replaced: existing))
        changes += removeExpired(now: now)
        changes += evict(beyond: Self.maximumPerDomain, among: cookies.values.filter { $0.domain == cookie.domain })
        changes += evict(beyond: Self.maximumCookies, among: Array(cookies.values))
        return changes
    }

    /// Removes the least recently used of `candidates` until only `limit` remain.
    private mutating func evict(beyond limit: Int, among candidates: [Cookie]) -> [Change] {
        guard candidates.count > limit else { return [] }
        let oldest = candidates.sorted { ($0.lastAccessedAt, $0.createdAt) < ($1.lastAccessedAt, $1.createdAt) }.prefix(candidates.count - limit)
        return oldest.map { cookie in
            cookies[cookie.key] = nil
            return .removed(cookie)
        }
    }

    mutating func removeExpired(now: Date) -> [Change] {
        let expired = cookies.values.filter { $0.isExpired(at: now) }
        for cookie in expired { cookies[cookie.key] = nil }
        return expired.map { .removed($0) }
    }

    package mutating func remove(where predicate: (Cookie) -> Bool) -> [Change] {
        let gone = cookies.values.filter(predicate)
        for cookie in gone { cookies[cookie.key] = nil }
        return gone.map { .removed($0) }
    }

    // MARK: retrieving (RFC 6265 5.4)

    /// The cookies a request to `url` carries, in Cookie-header order: longer paths first, then
    /// earlier created. Secure cookies go over https only; HttpOnly ones go (this is HTTP).
    /// `touch` marks them used (a request is going out; a listing only looks).
    package mutating func cookies(for url: CookieRequestURL, now: Date, touch: Bool) -> [Cookie] {
        let matching = cookies.values.filter { cookie in
            !cookie.isExpired(at: now)
                && (cookie.isHostOnly ? url.host == cookie.domain : CookieDomain.matches(host: url.host, domain: cookie.domain))
                && CookieDomain.pathMatches(url.path, cookie.path)
                && (!cookie.isSecure || url.isSecure)
        }.sorted(by: Self.headerOrder)
        if touch { for cookie in matching { cookies[cookie.key]?.lastAccessedAt = now } }
        return matching
    }

    /// Every cookie that has not expired, in a stable order (domain, then header order).
    package func all(now: Date) -> [Cookie] {
        cookies.values.filter { !$0.isExpired(at: now) }.sorted { a, b in
            a.domain != b.domain ? a.domain < b.domain : Self.headerOrder(a, b)
        }
    }

    /// RFC 6265 5.4 step 2, with name as the last tie-break so the order never depends on hashing.
    static func headerOrder(_ a: Cookie, _ b: Cookie) -> Bool {
        if a.path.utf8.count != b.path.utf8.count { return a.path.utf8.count > b.path.utf8.count }
        if a.createdAt != b.createdAt { return a.createdAt < b.createdAt }
        return a.name < b.name
    }

    /// The Cookie header value for `cookies` ("a=1; b=2"), nil when there are none.
    package static func header(_ cookies: [Cookie]) -> String? {
        cookies.isEmpty ? nil : cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }
}
