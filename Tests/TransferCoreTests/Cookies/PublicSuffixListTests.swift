import Foundation
import Testing
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

    @Test func aMissingFileGivesTheListThatTrustsNoDomainAttribute() {
        #expect(PublicSuffixList.load(path: "/nonexistent/public_suffix_list.dat") == nil)
        let fallback = PublicSuffixList.unavailable
        #expect(fallback.isPublicSuffix("example.com"))
        #expect(fallback.site(of: "www.example.com") == "www.example.com")
    }
}
