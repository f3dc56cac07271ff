import Foundation
import Testing
import TestSupport
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The public suffix list as Debian's `publicsuffix` package installs it (scripts/test.sh
/// installs it), and its rules on a small list of our own.
@Suite struct PublicSuffixListTests {
    static let sample = PublicSuffixList(text: """
        // comment
        com
        uk
        co.uk
        *.ck
        !www.ck
        github.io
        香港
        個人.香港
        """)

    @Test func rulesWildcardsAndExceptions() {
        let list = Self.sample
        #expect(list.isPublicSuffix("com"))
        #expect(list.isPublicSuffix("co.uk"))
        #expect(!list.isPublicSuffix("example.co.uk"))
        #expect(list.isPublicSuffix("anything.ck"))
        #expect(!list.isPublicSuffix("www.ck"))
        #expect(list.isPublicSuffix("github.io"))
        #expect(list.isPublicSuffix("localhost"), "the default rule: every single label")
        #expect(!list.isPublicSuffix("user.github.io"))
    }

    @Test func unicodeRulesMatchTheirPunycodeHosts() {
        #expect(Punycode.asciiDomain("香港") == "xn--j6w193g")
        #expect(Punycode.asciiDomain("bücher.example") == "xn--bcher-kva.example")
        #expect(Punycode.asciiDomain("münchen") == "xn--mnchen-3ya")
        #expect(Self.sample.isPublicSuffix("xn--j6w193g"))
        #expect(Self.sample.isPublicSuffix(Punycode.asciiDomain("個人.香港")))
    }

    @Test func sites() {
        let list = Self.sample
        #expect(list.site(of: "www.example.co.uk") == "example.co.uk")
        #expect(list.site(of: "a.b.example.com") == "example.com")
        #expect(list.site(of: "a.www.ck") == "www.ck")
        #expect(list.site(of: "x.y.foo.ck") == "y.foo.ck")
        #expect(list.site(of: "127.0.0.1") == "127.0.0.1")
        #expect(list.site(of: "localhost") == "localhost")
        #expect(list.site(of: "co.uk") == "co.uk")
    }

    @Test func theSystemListIsInstalledAndComplete() throws {
        let list = try #require(PublicSuffixList.load(), "\(PublicSuffixList.systemPath) is missing: install Debian's publicsuffix package (scripts/test.sh does)")
        #expect(list.isPublicSuffix("com") && list.isPublicSuffix("co.uk") && list.isPublicSuffix("github.io"))
        #expect(list.isPublicSuffix("xn--j6w193g"))
        #expect(!list.isPublicSuffix("example.co.uk"))
        #expect(list.site(of: "www.example.co.uk") == "example.co.uk")
    }

    /// The list as the Character-based parser read it before the byte reading (the reference the
    /// byte reading must agree with): rules, wildcard parents and exceptions.
    private static func referenceSets(_ text: String) -> (rules: Set<String>, wildcards: Set<String>, exceptions: Set<String>) {
        var sets: (rules: Set<String>, wildcards: Set<String>, exceptions: Set<String>) = ([], [], [])
        for line in text.split(whereSeparator: \.isNewline) {
            guard let rule = line.split(whereSeparator: \.isWhitespace).first, !rule.hasPrefix("//") else { continue }
            let ascii = Punycode.asciiDomain(rule.lowercased())
            if ascii.hasPrefix("!") {
                sets.exceptions.insert(String(ascii.dropFirst()))
            } else if ascii.hasPrefix("*.") {
                sets.wildcards.insert(String(ascii.dropFirst(2)))
            } else {
                sets.rules.insert(ascii)
            }
        }
        return sets
    }

    private static func expectSameSets(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let parsed = PublicSuffixList(text: text)
        let reference = referenceSets(text)
        #expect(parsed.rules == reference.rules, "\(what): rules", sourceLocation: sourceLocation)
        #expect(parsed.wildcards == reference.wildcards, "\(what): wildcards", sourceLocation: sourceLocation)
        #expect(parsed.exceptions == reference.exceptions, "\(what): exceptions", sourceLocation: sourceLocation)
    }

    /// The parser reads bytes (a daemon's start parses ~10,000 lines); it must give the sets the
    /// Character-based reading gave: on the system's list, on lines made to meet its edges, and
    /// on random lines of ASCII, Unicode letters, Unicode spaces and newlines.
    @Test func readingTheBytesGivesWhatReadingCharactersGave() throws {
        let system = try #require(FileManager.default.contents(atPath: PublicSuffixList.systemPath))
        let systemText = String(decoding: system, as: UTF8.self)
        Self.expectSameSets(systemText, "the system list")
        #expect(PublicSuffixList(text: systemText).rules.count > 5000)

        Self.expectSameSets("""
            COM\r\nCo.UK\t// a comment after a tab\r\n   leading.spaces  trailing words
            // a comment
              // an indented comment
            /\n/x\n!WWW.CK\n*.CK\n\u{0B}vt.example\u{0C}ff.example\r\rcr.example
            BÜCHER.example\nbücher.example\u{00A0}after-nbsp\nnel\u{0085}after.nel
            ls\u{2028}after.ls\n\u{0301}combining.first\nc\u{0301}.example\n\t\n
            香港\n個人.香港 rest\n*.個人.香港\n!www.個人.香港\n\u{1}control.example
            """, "edges")

        let pieces = ["a", "Z", "0", "-", ".", "!", "*", "/", " ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}",
                      "ü", "Ü", "香", "\u{00A0}", "\u{0085}", "\u{2028}", "\u{2029}", "\u{3000}", "\u{0301}", "//"]
        var generator = SeededGenerator(seed: 18)
        for round in 0..<20 {
            var text = ""
            for _ in 0..<400 { text += pieces.randomElement(using: &generator)! }
            Self.expectSameSets(text, "random text \(round)")
        }
    }

    /// Each service loads the list when it starts; a parsed list is reused while the file is
    /// the same one, and a file replaced the way a package upgrade replaces it is read again.
    @Test func aListIsParsedAgainOnlyWhenItsFileChanged() throws {
        let directory = try TempDirectory(prefix: "transferd-psl")
        defer { directory.remove() }
        let path = directory.path + "/list.dat"
        try Data("aaa.test\n".utf8).write(to: URL(fileURLWithPath: path))
        let first = try #require(PublicSuffixList.load(path: path))
        #expect(first.isPublicSuffix("aaa.test") && !first.isPublicSuffix("bbb.test"))
        // The same inode, size and modification time: the parsed list is reused, not the file
        // read again (what the stamp stands for; a real list is never edited this way).
        var before = stat()
        #expect(stat(path, &before) == 0)
        try Data("zzz.test\n".utf8).write(to: URL(fileURLWithPath: path), options: [])
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(try #require(PublicSuffixList.load(path: path)).isPublicSuffix("aaa.test"))

        // Same size, a new file renamed over the old one (dpkg's way): another inode.
        let replacement = directory.path + "/list.new"
        try Data("bbb.test\n".utf8).write(to: URL(fileURLWithPath: replacement))
        #expect(rename(replacement, path) == 0)
        let renamed = try #require(PublicSuffixList.load(path: path))
        #expect(renamed.isPublicSuffix("bbb.test") && !renamed.isPublicSuffix("aaa.test"))

        // Rewritten in place with another length.
        try Data("ccc.example\n".utf8).write(to: URL(fileURLWithPath: path), options: [])
        let rewritten = try #require(PublicSuffixList.load(path: path))
        #expect(rewritten.isPublicSuffix("ccc.example") && !rewritten.isPublicSuffix("bbb.test"))

        try FileManager.default.removeItem(atPath: path)
        #expect(PublicSuffixList.load(path: path) == nil)
    }

    @Test func aMissingFileGivesTheListThatTrustsNoDomainAttribute() {
        #expect(PublicSuffixList.load(path: "/nonexistent/public_suffix_list.dat") == nil)
        let fallback = PublicSuffixList.unavailable
        #expect(fallback.isPublicSuffix("example.com"))
        #expect(fallback.site(of: "www.example.com") == "www.example.com")
    }
}
