internal import FoundationEssentials

/// One Set-Cookie header line as RFC 6265 5.2 parses it: the name, the value and the attributes
/// it carries, not yet checked against the request (`CookieJar.store` does that, 5.3).
///
/// Parsing is lenient as browsers are: unknown attributes and attributes with bad values are
/// ignored, the last of a repeated attribute wins, Max-Age wins over Expires. A line without
/// "=" in its first part, with an empty name, or with control characters is no cookie at all.
struct SetCookie: Equatable {
    var name: String
    var value: String
    /// The Domain attribute, lowercased, its leading dot removed; nil when absent or empty.
    var domain: String?
    /// The Path attribute when it starts with "/"; nil otherwise (the default path applies).
    var path: String?
    /// From Expires or Max-Age (Max-Age wins); nil: a session cookie.
    var expires: Date?
    var isSecure = false
    var isHTTPOnly = false
    var sameSite: SameSitePolicy?

    /// The longest a cookie is kept (RFC 6265bis 5.6: user agents cap expiry at 400 days).
    static let maximumLifetime: Double = 400 * 86_400

    init?(_ line: String, now: Date) {
        var parts = line.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let pair = parts.popFirst(), let equals = pair.firstIndex(of: "=") else { return nil }
        name = pair[..<equals].trimmed()
        value = pair[pair.index(after: equals)...].trimmed()
        guard !name.isEmpty, !Self.hasControlCharacters(name), !Self.hasControlCharacters(value) else { return nil }

        var expiresAttribute: Date?
        var maxAge: Date?
        for attribute in parts {
            let (key, argument): (String, String)
            if let equals = attribute.firstIndex(of: "=") {
                key = attribute[..<equals].trimmed().lowercased()
                argument = attribute[attribute.index(after: equals)...].trimmed()
            } else {
                key = attribute.trimmed().lowercased()
                argument = ""
            }
            switch key {
            case "expires":
                if let date = CookieDate.parse(argument) { expiresAttribute = date }
            case "max-age":
                if let seconds = Self.deltaSeconds(argument) {
                    // Zero or less: expired at once (the earliest representable time).
                    maxAge = seconds <= 0 ? Date.distantPast : now.addingTimeInterval(Double(min(seconds, Int(Self.maximumLifetime))))
                }
            case "domain":
                var domain = argument.lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                self.domain = domain.isEmpty ? nil : domain
            case "path":
                path = argument.hasPrefix("/") ? argument : nil
            case "secure": isSecure = true
            case "httponly": isHTTPOnly = true
            case "samesite": sameSite = SameSitePolicy(rawValue: argument.lowercased())
            default: break
            }
        }
        if let date = maxAge ?? expiresAttribute {
            expires = min(date, now.addingTimeInterval(Self.maximumLifetime))
        }
    }

    /// Max-Age's value: an optional "-" and digits (RFC 6265 5.2.2); huge values saturate.
    private static func deltaSeconds(_ text: String) -> Int? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let magnitude = Int(digits.prefix(12)) ?? 0  // 12 digits are far beyond the 400-day cap
        return text.hasPrefix("-") ? -magnitude : magnitude
    }

    /// CTLs other than HTAB make a cookie invalid (RFC 6265bis 5.6 step 1).
    static func hasControlCharacters(_ text: String) -> Bool {
        text.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7f }
    }
}
