import Foundation
import Testing
import Curl
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Which proxy a request takes (`ProxyDictionary.route`): the scheme's own, else SOCKS, and
/// none for exceptions and (when asked) simple host names.
@Suite struct ProxyRouteTests {
    private func proxies(_ json: String) throws -> ProxyDictionary {
        try JSONCoding.decoder.decode(ProxyDictionary.self, from: Data(json.utf8))
    }

    private let all = #"""
        {"HTTPEnable": 1, "HTTPProxy": "h", "HTTPPort": 1, "HTTPSEnable": 1, "HTTPSProxy": "s", "HTTPSPort": 2,
         "SOCKSEnable": 1, "SOCKSProxy": "::1", "SOCKSPort": 3, "SOCKSProxyUsername": "u", "SOCKSProxyPassword": "p"}
        """#

    @Test func eachSchemeTakesItsOwnProxyBeforeSOCKS() throws {
        let both = try proxies(all)
        #expect(both.route(scheme: "http", host: "example.com")?.url == "http://h:1")
        #expect(both.route(scheme: "HTTPS", host: "example.com")?.url == "http://s:2")
        let socksOnly = try proxies(#"{"HTTPEnable": 1, "HTTPProxy": "h", "HTTPPort": 1, "SOCKSEnable": 1, "SOCKSProxy": "::1", "SOCKSPort": 3}"#)
        #expect(socksOnly.route(scheme: "https", host: "example.com")?.url == "socks5h://[::1]:3")
        let disabled = try proxies(#"{"HTTPEnable": 0, "HTTPProxy": "h", "HTTPPort": 1}"#)
        #expect(disabled.route(scheme: "http", host: "example.com") == nil)
    }

    @Test func credentialsGoWithTheirProxy() throws {
        let route = try #require(try proxies(all).route(scheme: "ftp", host: "example.com"))
        #expect(route.kind == .socks5 && route.username == "u" && route.password == "p")
        #expect(!route.description.contains("p)") && route.description.contains("password hidden"))
    }

    @Test(arguments: [
        ("example.com", "example.com", true), ("example.com", "EXAMPLE.com.", true), ("example.com", "www.example.com", false),
        ("*.example.com", "www.example.com", true), ("*.example.com", "a.b.example.com", true), ("*.example.com", "example.com", false),
        (".example.com", "www.example.com", true), (".example.com", "badexample.com", false),
        ("10.0.0.0/8", "10.200.3.4", true), ("10.0.0.0/8", "11.0.0.1", false), ("169.254/16", "169.254.9.9", true),
        ("127.0.0.1", "127.0.0.1", true), ("127.0.0.1", "127.0.0.2", false), ("10.0.0.0/8", "ten.example", false),
        ("fd00::/8", "[fd12::1]", true), ("fd00::/8", "fe80::1", false), ("::1", "[::1]", true),
    ])
    func exceptionsBypassTheProxy(pattern: String, host: String, bypasses: Bool) throws {
        let dictionary = try proxies(#"{"HTTPEnable": 1, "HTTPProxy": "h", "HTTPPort": 1, "ExceptionsList": ["\#(pattern)"]}"#)
        #expect((dictionary.route(scheme: "http", host: host) == nil) == bypasses)
    }

    @Test func simpleHostnamesBypassOnlyWhenAsked() throws {
        let excluding = try proxies(#"{"HTTPEnable": 1, "HTTPProxy": "h", "HTTPPort": 1, "ExcludeSimpleHostnames": 1}"#)
        #expect(excluding.route(scheme: "http", host: "localhost") == nil)
        #expect(excluding.route(scheme: "http", host: "intranet") == nil)
        #expect(excluding.route(scheme: "http", host: "example.com") != nil)
        #expect(excluding.route(scheme: "http", host: "[::1]") != nil, "an IPv6 address is not a simple host name")
        let keeping = try proxies(#"{"HTTPEnable": 1, "HTTPProxy": "h", "HTTPPort": 1}"#)
        #expect(keeping.route(scheme: "http", host: "localhost") != nil)
    }
}

/// Failures at the proxy read as URLSession users expect, and never name credentials.
@Suite struct ProxyErrorMappingTests {
    private let route = ProxyRoute(kind: .http, host: "127.0.0.1", port: 3128, username: "u", password: "secret-pw")

    @Test func refusedTunnelsAndSOCKSAuthenticationAreUserAuthenticationRequired() {
        for status in [407, 401] {
            let error = URLErrorMapping.proxyError(connectStatus: status, failure: nil, route: route)
            #expect(error?.name == "userAuthenticationRequired")
            #expect(error?.message.contains("secret-pw") == false)
        }
        #expect(URLErrorMapping.proxyError(connectStatus: 403, failure: nil, route: route)?.name == "cannotConnectToHost")
        #expect(URLErrorMapping.proxyError(connectStatus: 0, failure: .credentialsRejected, route: route)?.name == "userAuthenticationRequired")
        #expect(URLErrorMapping.proxyError(connectStatus: 0, failure: .authenticationRequired, route: route)?.name == "userAuthenticationRequired")
        #expect(URLErrorMapping.proxyError(connectStatus: 200, failure: .other(5), route: route) == nil, "not the proxy's doing: the plain table")
        #expect(URLErrorMapping.proxyError(connectStatus: 407, failure: nil, route: nil) == nil, "no proxy, no proxy error")
    }
}
