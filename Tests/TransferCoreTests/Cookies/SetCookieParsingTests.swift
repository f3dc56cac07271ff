import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// RFC 6265 5.2 and 5.1.1: Set-Cookie lines and cookie dates, parsed leniently as browsers do.
@Suite struct SetCookieParsingTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func nameValueAndEveryAttribute() throws {
        let parsed = try #require(SetCookie(" sid = a b ; Domain=.Example.COM; Path=/docs; Secure; HttpOnly; SameSite=Strict; Unknown=1", now: Self.now))
        #expect(parsed.name == "sid")
        #expect(parsed.value == "a b")
        #expect(parsed.domain == "example.com")
        #expect(parsed.path == "/docs")
        #expect(parsed.isSecure && parsed.isHTTPOnly)
        #expect(parsed.sameSite == .strict)
        #expect(parsed.expires == nil)
    }

    @Test(arguments: ["novalue", "=v", " =v", "a\u{1}b=v", "a=b\u{7f}"])
    func linesThatAreNoCookie(_ line: String) {
        #expect(SetCookie(line, now: Self.now) == nil)
    }

    @Test func maxAgeWinsOverExpiresInEitherOrder() throws {
        let first = try #require(SetCookie("a=1; Max-Age=60; Expires=Wed, 09 Jun 2021 10:18:14 GMT", now: Self.now))
        let second = try #require(SetCookie("a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Max-Age=60", now: Self.now))
        #expect(first.expires == Self.now.addingTimeInterval(60))
        #expect(second.expires == Self.now.addingTimeInterval(60))
    }

    @Test func maxAgeZeroOrNegativeExpiresAtOnceAndBadValuesAreIgnored() throws {
        #expect(try #require(SetCookie("a=1; Max-Age=0", now: Self.now)).expires! <= Self.now)
        #expect(try #require(SetCookie("a=1; Max-Age=-5", now: Self.now)).expires! <= Self.now)
        #expect(try #require(SetCookie("a=1; Max-Age=1x", now: Self.now)).expires == nil)
        #expect(try #require(SetCookie("a=1; Expires=not a date", now: Self.now)).expires == nil)
    }

    @Test func lifetimeIsCappedAt400Days() throws {
        let parsed = try #require(SetCookie("a=1; Max-Age=999999999999999", now: Self.now))
        #expect(parsed.expires == Self.now.addingTimeInterval(400 * 86_400))
    }

    @Test func theLastOfARepeatedAttributeWinsAndBadPathsFallBack() throws {
        let parsed = try #require(SetCookie("a=1; Path=/x; Path=/y; Domain=a.com; Domain=; SameSite=Lax; SameSite=bogus", now: Self.now))
        #expect(parsed.path == "/y")
        #expect(parsed.domain == nil)
        #expect(parsed.sameSite == nil)
        #expect(try #require(SetCookie("a=1; Path=relative", now: Self.now)).path == nil)
    }

    @Test(arguments: [
        ("Wed, 09 Jun 2021 10:18:14 GMT", 1_623_233_894.0),
        ("Wednesday, 09-Jun-21 10:18:14 GMT", 1_623_233_894.0),
        ("Sun Nov  6 08:49:37 1994", 784_111_777.0),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
        ("09 Jun 2021 10:18:14", 1_623_233_894.0),
        ("Mon, 29 Feb 2016 23:59:59 GMT", 1_456_790_399.0),
    ])
    func cookieDates(_ text: String, _ expected: Double) {
        #expect(CookieDate.parse(text) == Date(timeIntervalSince1970: expected))
    }

    @Test(arguments: ["Wed, 31 Jun 2021 10:18:14 GMT", "Mon, 29 Feb 2021 00:00:00 GMT", "09 Jun 2021 24:00:00", "09 Foo 2021 10:00:00", "Jun 2021 10:18:14", "1600 Jun 09 10:00:00"])
    func invalidCookieDates(_ text: String) {
        #expect(CookieDate.parse(text) == nil)
    }
}
