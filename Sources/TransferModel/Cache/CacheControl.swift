/// The Cache-Control directives a private cache acts on (RFC 9111 section 5.2), parsed from a
/// request's or a response's header fields. Unknown directives are ignored, as the RFC asks;
/// a malformed delta-seconds value counts as absent, except `max-age`, which then makes a
/// response stale (RFC 9111 section 4.2.1: treat an invalid freshness as stale).
package struct CacheControl: Equatable, Sendable {
    package var maxAge: Int?
    /// Request only: accepts a stale response up to this many seconds past its lifetime
    /// (`max-stale` without a value: any staleness).
    package var maxStale: Int?
    /// Request only: wants a response fresh for at least this many more seconds.
    package var minFresh: Int?
    package var noCache = false
    package var noStore = false
    package var mustRevalidate = false
    package var isPrivate = false
    package var isPublic = false
    /// s-maxage: only a shared cache reads it; it also lets one reuse an authorized response.
    package var hasSharedMaxAge = false
    /// Request only: answer from the cache or not at all.
    package var onlyIfCached = false
    /// `max-age` was present but not a number: a response is stale.
    package var invalidMaxAge = false

    /// `max-stale` with no value: any stale response is acceptable.
    package static let anyStaleness = Int.max

    init() {}

    /// The directives of every `Cache-Control` field in `headers` (repeated fields arrive joined
    /// with ", "). A request without Cache-Control that says `Pragma: no-cache` means no-cache
    /// (RFC 9111 section 5.4); a response's Pragma is ignored.
    package init(headers: [String: String], isRequest: Bool) {
        let value = ResponseInfo.value(of: "Cache-Control", in: headers)
        if let value { self.init(parsing: value) } else { self.init() }
        if isRequest, value == nil, let pragma = ResponseInfo.value(of: "Pragma", in: headers),
           pragma.split(separator: ",").contains(where: { $0.trimmed().lowercased() == "no-cache" }) {
            noCache = true
        }
    }

    init(parsing value: String) {
        for (name, argument) in Self.directives(value) {
            switch name {
            case "max-age":
                maxAge = argument.flatMap(Self.seconds)
                invalidMaxAge = maxAge == nil
            case "max-stale": maxStale = argument.map { Self.seconds($0) ?? 0 } ?? Self.anyStaleness
            case "min-fresh": minFresh = argument.flatMap(Self.seconds)
            case "no-cache": noCache = true  // with field names too: revalidating is always safe
            case "no-store": noStore = true
            case "must-revalidate", "proxy-revalidate": mustRevalidate = true
            case "private": isPrivate = true
            case "public": isPublic = true
            case "s-maxage": hasSharedMaxAge = true
            case "only-if-cached": onlyIfCached = true
            default: break
            }
        }
    }

    /// `name[=value]` pairs, names lowercased, quotes taken off values. Commas inside a quoted
    /// value (`no-cache="a, b"`) do not split.
    static func directives(_ value: String) -> [(String, String?)] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        for character in value {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts.compactMap { part in
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard let first = pieces.first else { return nil }
            let name = first.trimmed().lowercased()
            guard !name.isEmpty else { return nil }
            let argument = pieces.count > 1 ? pieces[1].trimmed().trimmed(["\""]) : nil
            return (name, argument)
        }
    }

    /// delta-seconds (RFC 9111 section 1.2.2): digits only; values too large for an Int are
    /// taken as the largest (2^31 is "infinity" in the RFC).
    package static func seconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(text) ?? Int(Int32.max)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
