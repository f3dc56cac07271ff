internal import FoundationEssentials
internal import Glibc
internal import Synchronization

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

    private(set) var rules: Set<String> = []
    /// The parents of wildcard rules: "ck" for "*.ck".
    private(set) var wildcards: Set<String> = []
    private(set) var exceptions: Set<String> = []
    /// False for `unavailable`.
    let isAvailable: Bool

    /// The list that refuses every Domain attribute other than the request host.
    package static let unavailable = PublicSuffixList(available: false)

    private init(available: Bool) { isAvailable = available }

    /// Parses the list's text (one rule a line, "//" comments, Unicode rules as punycode).
    ///
    /// Read as bytes: every daemon parses the ~10,000 lines when it starts, and reading them as
    /// Characters was half of a release daemon's start-up CPU (about 50 ms). A line with a byte
    /// outside ASCII (a Unicode rule, a few hundred of them) goes through `addRules(inLine:)`, the
    /// Character-based reading, so that Unicode's newlines and spaces count as before.
    init(text: String) {
        isAvailable = true
        var text = text
        text.withUTF8 { bytes in
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                var isASCII = true
                while lineEnd < bytes.count, !Self.isASCIINewline(bytes[lineEnd]) {
                    if bytes[lineEnd] >= 0x80 { isASCII = false }
                    lineEnd += 1
                }
                if isASCII {
                    addRule(asciiLine: UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd]))
                } else {
                    addRules(inLine: String(decoding: UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd]), as: UTF8.self))
                }
                lineStart = lineEnd + 1
            }
        }
    }

    /// \n, \r, vertical tab and form feed: the ASCII characters `Character.isNewline` holds for.
    private static func isASCIINewline(_ byte: UInt8) -> Bool { byte >= 0x0A && byte <= 0x0D }

    /// Tab, the four newlines and space: the ASCII characters `Character.isWhitespace` holds for.
    private static func isASCIIWhitespace(_ byte: UInt8) -> Bool { (byte >= 0x09 && byte <= 0x0D) || byte == 0x20 }

    /// A line of ASCII bytes: its rule is its first word, lowercased (punycode changes nothing).
    private mutating func addRule(asciiLine line: UnsafeBufferPointer<UInt8>) {
        guard let start = line.firstIndex(where: { !Self.isASCIIWhitespace($0) }) else { return }
        let end = line[start...].firstIndex(where: Self.isASCIIWhitespace) ?? line.endIndex
        let word = line[start..<end]
        if word.count >= 2, word[start] == UInt8(ascii: "/"), word[start + 1] == UInt8(ascii: "/") { return }
        let rule = String(unsafeUninitializedCapacity: word.count) { buffer in
            for (offset, byte) in word.enumerated() {
                buffer[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte
            }
            return word.count
        }
        add(rule)
    }

    /// A line read as Characters (Unicode newlines split it further, Unicode spaces end a rule).
    private mutating func addRules(inLine text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            // A rule ends at the first whitespace; the rest of the line is ignored.
            guard let rule = line.split(whereSeparator: \.isWhitespace).first, !rule.hasPrefix("//") else { continue }
            add(Punycode.asciiDomain(rule.lowercased()))
        }
    }

    private mutating func add(_ rule: String) {
        if rule.hasPrefix("!") {
            exceptions.insert(String(rule.dropFirst()))
        } else if rule.hasPrefix("*.") {
            wildcards.insert(String(rule.dropFirst(2)))
        } else {
            rules.insert(rule)
        }
    }

    /// Reads the list from `path`; nil when it cannot be read. A list parsed before is reused
    /// while the file keeps its size, modification time and inode (``ParsedLists``).
    package static func load(path: String = systemPath) -> PublicSuffixList? {
        guard let stamp = FileStamp(path: path) else { return nil }
        if let known = ParsedLists.table.withLock({ $0[path] }), known.stamp == stamp { return known.list }
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return nil }
        let list = PublicSuffixList(text: String(decoding: data, as: UTF8.self))
        ParsedLists.table.withLock { table in
            if table.count >= ParsedLists.limit { table.removeAll(keepingCapacity: true) }
            table[path] = (stamp, list)
        }
        return list
    }

    /// Lists already parsed, by path, for the life of the process. Every `TransferService` loads
    /// the list when it starts, and parsing its ~10,000 rules is the costly part (a fifth of a
    /// second in debug code): a process that starts many services (the test bundle: one daemon
    /// a test; several nodes of a cluster in one process) parsed it each time. The list is the system's,
    /// the same for every tenant, so sharing it between services shares nothing of a tenant's.
    /// A file replaced on disk (an upgrade of Debian's package) has another stamp and is read
    /// again by the next service that starts. Bounded: past `limit` paths the table starts over.
    private enum ParsedLists {
        static let table = Mutex<[String: (stamp: FileStamp, list: PublicSuffixList)]>([:])
        static let limit = 16
    }

    /// What tells a file apart from the one read before: its inode, size and modification time.
    private struct FileStamp: Equatable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modifiedSeconds: Int
        let modifiedNanoseconds: Int

        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modifiedSeconds = info.st_mtim.tv_sec
            modifiedNanoseconds = info.st_mtim.tv_nsec
        }
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
