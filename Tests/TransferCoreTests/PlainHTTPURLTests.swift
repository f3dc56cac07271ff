import Foundation
import Testing
@testable import TransferModel

/// `PlainHTTPURL` lets `RequestURL.check` skip Foundation's parse only for URLs Foundation
/// accepts with that scheme and a host: held to Foundation over URLs made of the pieces where
/// the two could differ (hosts, ports, percent escapes, every ASCII byte in a path).
@Suite struct PlainHTTPURLTests {
    @Test func everyURLTakenAsPlainIsOneFoundationParsesWithAHost() {
        let hosts = ["127.0.0.1", "localhost", "a", "0", "999.999.999.999", "1.2.3.4.5", "a-b.example", "-a.example", "a-.example",
                     "a..b", ".a", "a.", "xn--bcher-kva.example", "Example.com", "ex_ample.com", String(repeating: "a", count: 63),
                     String(repeating: "a", count: 64), "[::1]", "user@host", "h%41st", "ho st", ""]
        let ports = ["", ":0", ":80", ":65535", ":65536", ":99999", ":123456", ":", ":8a"]
        var paths = ["", "/", "/files/f00000", "/a?b=c&d=e", "/a#frag", "/a#b#c", "/%41%7e", "/%4", "/%zz", "?q", "#f", "/a/../b", "//x"]
        paths += (32...126).map { "/a" + String(UnicodeScalar(UInt8($0))) + "b" }
        paths += ["/\u{7f}", "/\t", "/é", "/a b"]
        var plain = 0
        for scheme in ["http://", "https://", "HTTP://", "ftp://", "http:/", "http:"] {
            for host in hosts {
                for port in ports {
                    for path in paths {
                        let text = scheme + host + port + path
                        guard PlainHTTPURL.isPlain(text) else { continue }
                        plain += 1
                        let url = URL(string: text)
                        #expect(url != nil, "\(text)")
                        #expect(url?.scheme == (scheme == "https://" ? "https" : "http"), "\(text)")
                        #expect(url?.host?.isEmpty == false, "\(text)")
                        #expect(RequestURL.isSupported(text))
                        // The scheduler's host key, read off the bytes, is the one Foundation's parse gives.
                        #expect(RequestURL.origin(of: text) == RequestURL.parsedOrigin(of: text), "\(text)")
                    }
                }
            }
        }
        // The usual shapes are plain; the test would prove nothing if none were.
        #expect(plain > 1_000)
        for usual in ["http://127.0.0.1:8080/files/f00000", "https://cdn.example.com/a/b.tar.gz?x=1&y=%2F#top"] {
            #expect(PlainHTTPURL.isPlain(usual), "\(usual)")
        }
        #expect(PlainHTTPURL.origin("http://127.0.0.1:8080/files/f00000") == "http://127.0.0.1:8080")
        #expect(PlainHTTPURL.origin("https://cdn.example.com/a?b") == "https://cdn.example.com:443")
        #expect(PlainHTTPURL.origin("http://h:080/") == "http://h:80")
        #expect(PlainHTTPURL.origin("http://h:65536/") == nil)
        #expect(PlainHTTPURL.origin("HTTP://h/") == nil)
    }

    /// What is not plain is still checked by Foundation, as before.
    @Test func whatIsNotPlainIsCheckedAsBefore() {
        for text in ["http://ex ample.com/", "http:///path", "nota url", "http://[::1]:8080/", "HTTPS://Example.com/", "ftp://files.example/a"] {
            #expect(!PlainHTTPURL.isPlain(text), "\(text)")
        }
        #expect(throws: RequestURL.Malformed.self) { try RequestURL.check("http://ex ample.com/", field: "url") }
        #expect(throws: RequestURL.Malformed.self) { try RequestURL.check("http:///path", field: "url") }
        #expect(throws: Never.self) { try RequestURL.check("http://[::1]:8080/", field: "url") }
        #expect(throws: Never.self) { try RequestURL.check("HTTPS://Example.com/", field: "url") }
        #expect(throws: RequestURL.Malformed.self) { try RequestURL.check("http://a/" + String(repeating: "x", count: RequestURL.maxLength), field: "url") }
    }
}
