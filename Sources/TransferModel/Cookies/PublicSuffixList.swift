internal import FoundationEssentials

/// The public suffix list (https://publicsuffix.org): the domains under which anyone may
/// register a name ("com", "co.uk", "github.io"), so that a cookie set for one of them would
/// reach every site below it (a "supercookie"). Parsed once from Debian's `publicsuffix`
/// package: normal rules, wildcards ("*.ck") and exceptions ("!www.ck"), ICANN and private
/// sections alike, as browsers use them.
///
/// When the file is missing the list is `unavailable`: every domain then counts as a public
/// suffix, so a cookie's Domain attribute is accepted only when it names the request's own host
/// (it becomes host-only). Nothing is wrongly shared; cookies for sibling hosts are lost.
package struct PublicSuffixList: Sendable {
    package static let systemPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    private var rules: Set<String> = []
    /// The parents of wildcard rules: "ck" for "*.ck".
    private var wildcards: Set<String> = []
    private var exceptions: Set<String> = []
    /// False for `unavailable`.
    let isAvailable: Bool

    /// The list that refuses every Domain attribute other than the request host.
    package static let unavailable = PublicSuffixList(available: false)

    private init(available: Bool) { isAvailable = available }

    /// Parses the list's text (one rule a line, "//" comments, Unicode rules as punycode).
    init(text: String) {
        isAvailable = true
        for line in text.split(whereSeparator: \.isNewline) {
            // A rule ends at the first whitespace; the rest of the line is ignored.
            guard let rule = line.split(whereSeparator: \.isWhitespace).first, !rule.hasPrefix("//") else { continue }
            let ascii = Punycode.asciiDomain(rule.lowercased())
            if ascii.hasPrefix("!") {
                exceptions.insert(String(ascii.dropFirst()))
            } else if ascii.hasPrefix("*.") {
                wildcards.insert(String(ascii.dropFirst(2)))
            } else {
                rules.insert(ascii)
            }
        }
    }

    /// Reads the list from `path`; nil when it cannot be read.
    package static func load(path: String = systemPath) -> PublicSuffixList? {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return nil }
        return PublicSuffixList(text: String(decoding: data, as: UTF8.self))
    }

    /// Whether `domain` (lowercased, ASCII) is itself a public suffix.
    func isPublicSuffix(_ domain: String) -> Bool {
        guard isAvailable else { return true }
        if exceptions.contains(domain) { return false }
        if rules.contains(domain) { return true }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count == 1 { return true }  // the default rule "*": every top-level label
        return wildcards.contains(labels.dropFirst().joined(separator: "."))
    }

    /// The registrable domain (the public suffix and one label more: "example.co.uk" for
    /// "www.example.co.uk"); the host itself for an IP address, a single label, or a host that is
    /// a public suffix. Two hosts with the same one are the same site.
    package func site(of host: String) -> String {
        guard isAvailable, !CookieDomain.isIPAddress(host) else { return host }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        for start in labels.indices {
            let candidate = labels[start...].joined(separator: ".")
            guard isPublicSuffix(candidate) else { continue }
            return start == labels.startIndex ? host : labels[(start - 1)...].joined(separator: ".")
        }
        return host
    }
}
