import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `CookieJar`: RFC 6265 5.3 storage and 5.4 retrieval, with the system's public suffix list.
@Suite struct CookieJarTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let suffixes = PublicSuffixList.load() ?? .unavailable

    private static func url(_ text: String) -> CookieRequestURL { CookieRequestURL(text)! }

    /// Stores the lines as a response from `from` would; returns how many cookies were made.
    @discardableResult
    private static func receive(_ jar: inout CookieJar, _ lines: [String], from: String, at time: Date = now) -> Int {
        let made = lines.compactMap { CookieJar.cookie(from: $0, url: url(from), suffixes: suffixes, now: time) }
        for cookie in made { _ = jar.insert(cookie, now: time) }
        return made.count
    }

    private static func header(_ jar: inout CookieJar, _ to: String, at time: Date = now) -> String? {
        CookieJar.header(jar.cookies(for: url(to), now: time, touch: true))
    }

    @Test func hostOnlyCookiesGoToTheirHostAlone() {
        var jar = CookieJar()
        Self.receive(&jar, ["a=1"], from: "http://www.example.com/")
        #expect(Self.header(&jar, "http://www.example.com/x") == "a=1")
        #expect(Self.header(&jar, "http://sub.www.example.com/") == nil)
        #expect(Self.header(&jar, "http://example.com/") == nil)
    }

    @Test func domainCookiesGoToSubdomains() {
        var jar = CookieJar()
        Self.receive(&jar, ["a=1; Domain=example.com"], from: "http://www.example.com/")
        #expect(Self.header(&jar, "http://example.com/") == "a=1")
        #expect(Self.header(&jar, "http://x.y.example.com/") == "a=1")
        #expect(Self.header(&jar, "http://badexample.com/") == nil)
    }

    @Test func aDomainTheHostIsNotInIsRefused() {
        var jar = CookieJar()
        #expect(Self.receive(&jar, ["a=1; Domain=other.com", "b=2; Domain=sub.www.example.com"], from: "http://www.example.com/") == 0)
    }

    @Test func publicSuffixDomainsAreRefusedUnlessTheyAreTheHost() throws {
        try #require(Self.suffixes.isAvailable, "the public suffix list is missing (Debian package publicsuffix)")
        var jar = CookieJar()
        #expect(Self.receive(&jar, ["a=1; Domain=com"], from: "http://example.com/") == 0)
        #expect(Self.receive(&jar, ["a=1; Domain=co.uk"], from: "http://www.example.co.uk/") == 0)
        #expect(Self.receive(&jar, ["a=1; Domain=github.io"], from: "http://me.github.io/") == 0)
        #expect(Self.receive(&jar, ["b=2; Domain=example.co.uk"], from: "http://www.example.co.uk/") == 1)
        #expect(Self.header(&jar, "http://shop.example.co.uk/") == "b=2")
        // The host itself may name itself even though it is a public suffix: host-only.
        #expect(Self.receive(&jar, ["c=3; Domain=github.io"], from: "http://github.io/") == 1)
        #expect(Self.header(&jar, "http://github.io/") == "c=3")
        #expect(Self.header(&jar, "http://me.github.io/") == nil)
    }

    @Test func withoutAPublicSuffixListDomainAttributesAreNotTrusted() {
        let url = Self.url("http://www.example.co.uk/")
        #expect(CookieJar.cookie(from: "a=1; Domain=example.co.uk", url: url, suffixes: .unavailable, now: Self.now) == nil)
        let own = CookieJar.cookie(from: "a=1; Domain=www.example.co.uk", url: url, suffixes: .unavailable, now: Self.now)
        #expect(own?.isHostOnly == true)
    }

    @Test func pathsDefaultToTheRequestsFolderAndMatchBelow() {
        var jar = CookieJar()
        Self.receive(&jar, ["a=1", "b=2; Path=/"], from: "http://h.example/docs/page")
        #expect(Self.header(&jar, "http://h.example/docs") == "a=1; b=2")
        #expect(Self.header(&jar, "http://h.example/docs/x/y") == "a=1; b=2")
        #expect(Self.header(&jar, "http://h.example/other") == "b=2")
    }

    @Test func headerOrderIsLongerPathsFirstThenEarlierCreation() {
        var jar = CookieJar()
        Self.receive(&jar, ["late=1; Path=/"], from: "http://h.example/", at: Self.now.addingTimeInterval(2))
        Self.receive(&jar, ["early=1; Path=/"], from: "http://h.example/", at: Self.now.addingTimeInterval(1))
        Self.receive(&jar, ["deep=1; Path=/a/b"], from: "http://h.example/", at: Self.now.addingTimeInterval(3))
        Self.receive(&jar, ["mid=1; Path=/a"], from: "http://h.example/", at: Self.now.addingTimeInterval(4))
        #expect(Self.header(&jar, "http://h.example/a/b/c", at: Self.now.addingTimeInterval(5)) == "deep=1; mid=1; early=1; late=1")
        // Replacing a cookie keeps its creation time, so its place.
        Self.receive(&jar, ["early=2; Path=/"], from: "http://h.example/", at: Self.now.addingTimeInterval(6))
        #expect(Self.header(&jar, "http://h.example/", at: Self.now.addingTimeInterval(7)) == "early=2; late=1")
    }

    @Test func expiredCookiesGoAndAnExpiredSetCookieDeletes() {
        var jar = CookieJar()
        Self.receive(&jar, ["a=1; Max-Age=10", "b=2"], from: "http://h.example/")
        #expect(Self.header(&jar, "http://h.example/", at: Self.now.addingTimeInterval(5)) == "a=1; b=2")
        #expect(Self.header(&jar, "http://h.example/", at: Self.now.addingTimeInterval(11)) == "b=2")
        let later = Self.now.addingTimeInterval(12)
        Self.receive(&jar, ["b=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT"], from: "http://h.example/", at: later)
        #expect(Self.header(&jar, "http://h.example/", at: later) == nil)
        #expect(jar.cookies.isEmpty, "the expired cookie was removed, not just hidden")
    }

    @Test func secureCookiesComeAndGoOverHTTPSOnly() {
        var jar = CookieJar()
        #expect(Self.receive(&jar, ["s=1; Secure"], from: "http://h.example/") == 0)
        Self.receive(&jar, ["s=1; Secure; HttpOnly; SameSite=Lax", "p=2"], from: "https://h.example/")
        #expect(Self.header(&jar, "https://h.example/") == "p=2; s=1")
        #expect(Self.header(&jar, "http://h.example/") == "p=2")
        let kept = jar.all(now: Self.now).first { $0.name == "s" }
        #expect(kept?.isHTTPOnly == true && kept?.sameSitePolicy == .lax && kept?.isSecure == true)
    }

    @Test func cookiePrefixesAreEnforced() {
        var jar = CookieJar()
        #expect(Self.receive(&jar, ["__Secure-a=1", "__Host-b=1; Secure; Path=/x", "__Host-c=1; Secure; Domain=h.example"], from: "https://h.example/") == 0)
        #expect(Self.receive(&jar, ["__Secure-a=1; Secure", "__Host-b=1; Secure; Path=/"], from: "https://h.example/") == 2)
    }

    @Test func tooLargeCookiesAreRefused() {
        var jar = CookieJar()
        #expect(Self.receive(&jar, ["a=" + String(repeating: "x", count: 4096)], from: "http://h.example/") == 0)
        #expect(Self.receive(&jar, ["a=" + String(repeating: "x", count: 4095)], from: "http://h.example/") == 1)
    }

    @Test func theLeastRecentlyUsedGoBeyondFiftyPerDomain() {
        var jar = CookieJar()
        Self.receive(&jar, ["c0=1; Domain=h.example"], from: "http://h.example/")
        for index in 1..<50 {
            Self.receive(&jar, ["c\(index)=1"], from: "http://h.example/", at: Self.now.addingTimeInterval(Double(index)))
        }
        // Only the domain cookie c0 goes to a subdomain: sending it makes c1 the least recently used.
        #expect(Self.header(&jar, "http://sub.h.example/", at: Self.now.addingTimeInterval(100)) == "c0=1")
        Self.receive(&jar, ["c50=1"], from: "http://h.example/", at: Self.now.addingTimeInterval(200))
        let names = Set(jar.all(now: Self.now.addingTimeInterval(200)).map(\.name))
        #expect(names.count == 50)
        #expect(names.contains("c0") && names.contains("c50") && !names.contains("c1"))
    }

    @Test func theJarHoldsAtMost3000() {
        var jar = CookieJar()
        for index in 0..<3001 {
            Self.receive(&jar, ["c=1"], from: "http://h\(index).example/", at: Self.now.addingTimeInterval(Double(index)))
        }
        let all = jar.all(now: Self.now.addingTimeInterval(4000))
        #expect(all.count == 3000)
        #expect(!all.contains { $0.domain == "h0.example" }, "the oldest went")
    }
}
