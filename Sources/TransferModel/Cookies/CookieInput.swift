package import FoundationEssentials

/// The body of `PUT /v1/sessions/{sid}/cookies`: `{"cookies": [...]}`, at most 3000.
public struct CookiesPut: Decodable, Sendable {
    public var cookies: [CookieInput]

    enum CodingKeys: String, CodingKey, CaseIterable { case cookies }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        cookies = try decoder.container(keyedBy: CodingKeys.self).decode([CookieInput].self, forKey: .cookies)
        guard cookies.count <= CookieJar.maximumCookies else {
            throw InputError.tooLarge(field: "cookies", message: "has \(cookies.count) cookies; one request may carry \(CookieJar.maximumCookies)")
        }
    }
}

/// One cookie a client adds, in HTTPCookie's terms (what GET serves can be sent back:
/// `isSessionOnly` and `createdAt` are accepted and ignored). Checked in `cookie(...)`, with
/// the field of the first problem.
public struct CookieInput: Decodable, Sendable {
    var name: String
    var value: String
    var domain: String
    var path: String
    var expiresDate: String?
    var isSecure: Bool
    var isHTTPOnly: Bool
    var sameSitePolicy: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, value, domain, path, expiresDate, isSecure, isHTTPOnly, sameSitePolicy, isSessionOnly, createdAt
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        value = try c.decode(String.self, forKey: .value)
        domain = try c.decode(String.self, forKey: .domain)
        path = try c.decodeOmittable(String.self, forKey: .path) ?? "/"
        expiresDate = try c.decodeIfPresent(String.self, forKey: .expiresDate)
        isSecure = try c.decodeOmittable(Bool.self, forKey: .isSecure) ?? false
        isHTTPOnly = try c.decodeOmittable(Bool.self, forKey: .isHTTPOnly) ?? false
        sameSitePolicy = try c.decodeIfPresent(String.self, forKey: .sameSitePolicy)
        _ = try c.decodeOmittable(Bool.self, forKey: .isSessionOnly)
        _ = try c.decodeOmittable(String.self, forKey: .createdAt)
    }

    /// The cookie to store, or `InputError.invalidValue` naming `field`.NAME.
    package func cookie(suffixes: PublicSuffixList, now: Date, field: String) throws -> Cookie {
        func invalid(_ key: CodingKeys, _ message: String) -> InputError {
            .invalidValue(field: "\(field).\(key.rawValue)", message: message)
        }
        guard Validate.isToken(name) else { throw invalid(.name, "must be a non-empty HTTP token (letters, digits, !#$%&'*+-.^_`|~)") }
        guard !SetCookie.hasControlCharacters(value), !value.contains(";"), value.trimmed() == value else {
            throw invalid(.value, "must not contain control characters or \";\", nor start or end with a space")
        }
        guard name.utf8.count + value.utf8.count <= CookieJar.maximumCookieSize else {
            throw invalid(.value, "makes the cookie longer than \(CookieJar.maximumCookieSize) bytes (name and value)")
        }
        var host = domain.lowercased()
        let hostOnly = !host.hasPrefix(".")
        if !hostOnly { host.removeFirst() }
        host = Punycode.asciiDomain(host)
        guard Self.isHostName(host) else { throw invalid(.domain, "must be a host name or IP address, with a leading \".\" for a domain cookie") }
        if !hostOnly {
            guard !CookieDomain.isIPAddress(host) else { throw invalid(.domain, "is an IP address: a cookie for it is host-only (no leading \".\")") }
            guard !suffixes.isPublicSuffix(host) else { throw invalid(.domain, "is a public suffix: a cookie for every site under it is refused") }
        }
        guard path.hasPrefix("/"), !SetCookie.hasControlCharacters(path), !path.contains(";") else {
            throw invalid(.path, "must start with \"/\" and contain no control characters or \";\"")
        }
        var expires: Date?
        if let expiresDate {
            guard let date = Self.date(expiresDate) else { throw invalid(.expiresDate, "must be an RFC 3339 date-time, or null for a session cookie") }
            expires = min(date, now.addingTimeInterval(SetCookie.maximumLifetime))
        }
        var sameSite: SameSitePolicy?
        if let sameSitePolicy {
            guard let policy = SameSitePolicy(rawValue: sameSitePolicy.lowercased()) else { throw invalid(.sameSitePolicy, "must be lax, strict, none or null") }
            sameSite = policy
        }
        if name.hasPrefix("__Secure-") || name.hasPrefix("__Host-"), !isSecure {
            throw invalid(.isSecure, "must be true for a cookie named \(name.hasPrefix("__Host-") ? "__Host-" : "__Secure-")...")
        }
        if name.hasPrefix("__Host-"), !hostOnly || path != "/" {
            throw invalid(.domain, "must be host-only (no leading \".\") with path \"/\" for a cookie named __Host-...")
        }
        return Cookie(name: name, value: value, domain: host, path: path, isHostOnly: hostOnly, expiresDate: expires,
                      isSecure: isSecure, isHTTPOnly: isHTTPOnly, sameSitePolicy: sameSite, createdAt: now)
    }

    /// Letters, digits, "-", "_" and dots between non-empty labels; or an IP address.
    private static func isHostName(_ host: String) -> Bool {
        if host.contains(":") { return host.utf8.allSatisfy { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") || Character(Unicode.Scalar($0)).isHexDigit } }
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        return host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.utf8.allSatisfy { byte in
                (97...122).contains(byte) || (48...57).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }
    }

    /// RFC 3339, with or without fractional seconds.
    private static func date(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }
}
