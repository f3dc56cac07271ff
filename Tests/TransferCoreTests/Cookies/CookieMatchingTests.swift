import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// RFC 6265 5.1.3 and 5.1.4: domain-match, default-path and path-match.
@Suite struct CookieMatchingTests {
    @Test(arguments: [
        ("example.com", "example.com", true),
        ("www.example.com", "example.com", true),
        ("a.b.example.com", "example.com", true),
        ("badexample.com", "example.com", false),
        ("example.com", "www.example.com", false),
        ("127.0.0.1", "127.0.0.1", true),
        ("10.0.0.1", "0.0.1", false),
    ])
    func domainMatch(_ host: String, _ domain: String, _ expected: Bool) {
        #expect(CookieDomain.matches(host: host, domain: domain) == expected)
    }

    @Test(arguments: [("", "/"), ("/", "/"), ("/a", "/"), ("/a/", "/a"), ("/a/b", "/a"), ("/a/b/c", "/a/b"), ("x", "/")])
    func defaultPath(_ path: String, _ expected: String) {
        #expect(CookieDomain.defaultPath(of: path) == expected)
    }

    @Test(arguments: [
        ("/", "/", true), ("/docs", "/docs", true), ("/docs/", "/docs", true), ("/docs/a", "/docs", true),
        ("/docsa", "/docs", false), ("/doc", "/docs", false), ("/docs/a", "/docs/", true), ("/", "/docs", false),
    ])
    func pathMatch(_ requestPath: String, _ cookiePath: String, _ expected: Bool) {
        #expect(CookieDomain.pathMatches(requestPath, cookiePath) == expected)
    }

    @Test func requestURLs() throws {
        let url = try #require(CookieRequestURL("HTTPS://WWW.Example.COM./a/b?q=1"))
        #expect(url.host == "www.example.com" && url.path == "/a/b" && url.isSecure)
        #expect(CookieRequestURL("http://127.0.0.1:8080")?.path == "/")
        #expect(CookieRequestURL("ftp://example.com/") == nil)
        #expect(CookieRequestURL("not a url") == nil)
    }
}
