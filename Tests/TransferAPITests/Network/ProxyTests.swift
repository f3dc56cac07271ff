import Foundation
import Testing
import TestSupport

/// connectionProxyDictionary against real proxies on 127.0.0.1: tinyproxy (HTTP, and HTTPS
/// through CONNECT) and microsocks (SOCKS5). Each proxy's own log shows what went through it;
/// a probe query makes a test's requests its own in logs shared by the whole run.
@Suite struct ProxyTests {
    private static func http(_ proxy: ProxyPeer, _ extra: [String: Any] = [:]) -> [String: Any] {
        ["HTTPEnable": 1, "HTTPProxy": proxy.host, "HTTPPort": proxy.port].merging(extra) { _, new in new }
    }

    private static func https(_ proxy: ProxyPeer, _ extra: [String: Any] = [:]) -> [String: Any] {
        ["HTTPSEnable": 1, "HTTPSProxy": proxy.host, "HTTPSPort": proxy.port].merging(extra) { _, new in new }
    }

    private static func socks(_ proxy: ProxyPeer, _ extra: [String: Any] = [:]) -> [String: Any] {
        ["SOCKSEnable": 1, "SOCKSProxy": proxy.host, "SOCKSPort": proxy.port].merging(extra) { _, new in new }
    }

    private static func probe() -> String { "probe=\(UUID().uuidString)" }

    @Test func anHTTPDownloadGoesThroughTheHTTPProxy() async throws {
        let proxy = try Peers.httpProxy()
        let url = try Peers.nginx() + "/files/1MiB.bin?" + Self.probe()
        try await DaemonFixture.with { daemon in
            let session = try await daemon.session(configuration: ["connectionProxyDictionary": Self.http(proxy)])
            let mark = proxy.log.mark()
            #expect(try await daemon.downloadDigest(url, in: session) == (try TestFile.digest("1MiB.bin")))
            #expect(await proxy.log.waitForLine(containing: "GET \(url) HTTP/1.1", since: mark) != nil, "tinyproxy did not log \(url)")
        }
    }

    @Test func anHTTPSDownloadTunnelsThroughTheHTTPSProxy() async throws {
        let proxy = try Peers.httpProxy()
        let origin = try Peers.tls(.valid)
        try await DaemonFixture.with { daemon in
            let session = try await daemon.session(configuration: [
                "connectionProxyDictionary": Self.https(proxy), "tlsCABundle": try Peers.tlsCertificateAuthorityPEM(),
            ])
            let mark = proxy.log.mark()
            #expect(try await daemon.downloadDigest(origin + "/files/16MiB.bin", in: session) == (try TestFile.digest("16MiB.bin")))
            #expect(await proxy.log.waitForLine(containing: "CONNECT 127.0.0.1:\(TestFile.port(of: origin)) HTTP/1.1", since: mark) != nil)
            // The response is the origin's, not the proxy's "200 Connection established".
            let data = try await daemon.run("data", origin + "/files/hello.txt", in: session)
            let response = try #require(data.object("response"))
            #expect(response.int("statusCode") == 200)
            #expect((response.object("headers")?["Server"] as? String)?.hasPrefix("nginx") == true, "\(response)")
            #expect(try await daemon.body(try #require(data.int("id"))).text == "hello from nginx\n")
        }
    }

    @Test func bothSchemesGoThroughSOCKS5WithTheNameResolvedByTheProxy() async throws {
        let proxy = try Peers.socksProxy()
        let plainPort = TestFile.port(of: try Peers.nginx())
        let tlsPort = TestFile.port(of: try Peers.tls(.valid))
        try await DaemonFixture.with { daemon in
            let session = try await daemon.session(configuration: [
                "connectionProxyDictionary": Self.socks(proxy), "tlsCABundle": try Peers.tlsCertificateAuthorityPEM(),
            ])
            let mark = proxy.log.mark()
            // "localhost": microsocks logs the name it was given, so the name reached the proxy.
            #expect(try await daemon.downloadDigest("http://localhost:\(plainPort)/files/1MiB.bin", in: session) == (try TestFile.digest("1MiB.bin")))
            #expect(try await daemon.downloadDigest("https://localhost:\(tlsPort)/files/1MiB.bin", in: session) == (try TestFile.digest("1MiB.bin")))
            #expect(await proxy.log.waitForLine(containing: "connected to localhost:\(plainPort)", since: mark) != nil)
            #expect(await proxy.log.waitForLine(containing: "connected to localhost:\(tlsPort)", since: mark) != nil)
        }
    }

    @Test func theSchemesOwnProxyComesBeforeSOCKS() async throws {
        let httpProxy = try Peers.httpProxy()
        let socksProxy = try Peers.socksProxy()
        let plain = try Peers.nginx() + "/files/hello.txt?" + Self.probe()
        // By name: no other test tunnels to localhost through the HTTP proxy, so its log line is ours.
        let tls = "https://localhost:" + TestFile.port(of: try Peers.tls(.valid))
        try await DaemonFixture.with { daemon in
            let proxies = Self.http(httpProxy).merging(Self.socks(socksProxy)) { _, new in new }
            let session = try await daemon.session(configuration: ["connectionProxyDictionary": proxies, "tlsCABundle": try Peers.tlsCertificateAuthorityPEM()])
            let httpMark = httpProxy.log.mark()
            let socksMark = socksProxy.log.mark()
            #expect(try await daemon.run("data", plain, in: session).errorName == nil)
            #expect(try await daemon.run("data", tls + "/files/hello.txt", in: session).errorName == nil)
            #expect(await httpProxy.log.waitForLine(containing: plain, since: httpMark) != nil, "http went through the HTTP proxy")
            // https has no HTTPS proxy here: SOCKS carries it, and the HTTP proxy never sees it.
            #expect(await socksProxy.log.waitForLine(containing: "connected to localhost:\(TestFile.port(of: tls))", since: socksMark) != nil)
            #expect(!httpProxy.log.lines(since: httpMark).contains { $0.contains("CONNECT localhost:") })
        }
    }

    @Test func exceptionsAndSimpleHostnamesBypassTheProxy() async throws {
        let proxy = try Peers.httpProxy()
        let nginx = try Peers.nginx()
        let port = TestFile.port(of: nginx)
        try await DaemonFixture.with { daemon in
            let session = try await daemon.session(configuration: [
                "connectionProxyDictionary": Self.http(proxy, ["ExceptionsList": ["127.0.0.0/8", "*.example.invalid"], "ExcludeSimpleHostnames": 1]),
            ])
            let mark = proxy.log.mark()
            let byRange = "\(nginx)/files/hello.txt?\(Self.probe())"
            let byName = "http://localhost:\(port)/files/hello.txt?\(Self.probe())"
            #expect(try await daemon.run("data", byRange, in: session).errorName == nil)
            #expect(try await daemon.run("data", byName, in: session).errorName == nil)
            // The control: without the exceptions the same request is in the proxy's log.
            let control = try await daemon.session(configuration: ["connectionProxyDictionary": Self.http(proxy)])
            let proxied = "\(nginx)/files/hello.txt?\(Self.probe())"
            #expect(try await daemon.run("data", proxied, in: control).errorName == nil)
            #expect(await proxy.log.waitForLine(containing: proxied, since: mark) != nil)
            let lines = proxy.log.lines(since: mark)
            #expect(!lines.contains { $0.contains(byRange) || $0.contains(byName) }, "an excepted request reached the proxy: \(lines)")
        }
    }

    @Test func eachRedirectHopIsRoutedOnItsOwn() async throws {
        let proxy = try Peers.httpProxy()
        let httpbinPort = TestFile.port(of: try Peers.httpbin())
        let target = try Peers.nginx() + "/files/hello.txt?" + Self.probe()
        try await DaemonFixture.with { daemon in
            // httpbin by "localhost" (a simple host name: direct) redirects to nginx by address (proxied).
            let session = try await daemon.session(configuration: ["connectionProxyDictionary": Self.http(proxy, ["ExcludeSimpleHostnames": 1])])
            let mark = proxy.log.mark()
            let start = "http://localhost:\(httpbinPort)/redirect-to?url=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let task = try await daemon.run("data", start, in: session)
            #expect(task.errorName == nil)
            #expect(try await daemon.body(try #require(task.int("id"))).text == "hello from nginx\n")
            #expect(await proxy.log.waitForLine(containing: "GET \(target) HTTP/1.1", since: mark) != nil)
            #expect(!proxy.log.lines(since: mark).contains { $0.contains("redirect-to") })
        }
    }

    @Test func proxyCredentialsOpenTheAuthenticatingHTTPProxy() async throws {
        let proxy = try Peers.authenticatingHTTPProxy()
        let (username, password) = try Peers.proxyCredentials()
        let plain = try Peers.nginx() + "/files/1MiB.bin"
        let tls = try Peers.tls(.valid) + "/files/1MiB.bin"
        let ca = try Peers.tlsCertificateAuthorityPEM()
        func configuration(_ credentials: [String: Any]) -> [String: Any] {
            ["tlsCABundle": ca, "connectionProxyDictionary": Self.http(proxy).merging(Self.https(proxy)) { _, new in new }.merging(credentials) { _, new in new }]
        }
        try await DaemonFixture.with { daemon in
            // Wrong and missing credentials first: a tunnel opened with the right ones must not
            // carry them later either (see the end).
            for credentials in [[:], ["HTTPProxyUsername": username, "HTTPProxyPassword": "wrong", "HTTPSProxyUsername": username, "HTTPSProxyPassword": "wrong"]] as [[String: Any]] {
                let session = try await daemon.session(configuration: configuration(credentials))
                let download = try await daemon.run("download", plain, in: session)
                #expect(download.errorName == "userAuthenticationRequired", "\(download.object("error") ?? [:])")
                let data = try await daemon.run("data", plain, in: session)
                #expect(data.errorName == nil)
                // The proxy's refusal is the response. tinyproxy 1.11 answers wrong credentials
                // with 401 rather than 407 (RFC 9110 15.5.8 says 407); missing ones with 407.
                let status = data.object("response")?.int("statusCode")
                #expect(credentials.isEmpty ? status == 407 : status == 401 || status == 407, "a data task gets the proxy's refusal as its response")
                let tunnel = try await daemon.run("data", tls, in: session)
                #expect(tunnel.errorName == "userAuthenticationRequired", "\(tunnel.object("error") ?? [:])")
                #expect(tunnel.object("error")?.string("message")?.contains(password) == false)
            }
            let session = try await daemon.session(configuration: configuration([
                "HTTPProxyUsername": username, "HTTPProxyPassword": password, "HTTPSProxyUsername": username, "HTTPSProxyPassword": password,
            ]))
            let digest = try TestFile.digest("1MiB.bin")
            #expect(try await daemon.downloadDigest(plain, in: session) == digest)
            #expect(try await daemon.downloadDigest(tls, in: session) == digest)
            let data = try await daemon.run("data", plain, in: session)
            #expect(data.object("response")?.int("statusCode") == 200, "the 407 curl answered is not the response")
            #expect(try await daemon.body(try #require(data.int("id"))).body.count == 1 << 20, "the 407's own body is not part of the response body")
            // After the right credentials opened tunnels, wrong ones still fail.
            let wrong = try await daemon.session(configuration: configuration(["HTTPSProxyUsername": username, "HTTPSProxyPassword": "wrong"]))
            #expect(try await daemon.run("data", tls, in: wrong).errorName == "userAuthenticationRequired")
        }
    }

    @Test func socksCredentialsOpenTheAuthenticatingSOCKSProxy() async throws {
        let proxy = try Peers.authenticatingSOCKSProxy()
        let (username, password) = try Peers.proxyCredentials()
        let url = try Peers.nginx() + "/files/1MiB.bin"
        try await DaemonFixture.with { daemon in
            for credentials in [[:], ["SOCKSProxyUsername": username, "SOCKSProxyPassword": "wrong"]] as [[String: Any]] {
                let session = try await daemon.session(configuration: ["connectionProxyDictionary": Self.socks(proxy, credentials)])
                let task = try await daemon.run("download", url, in: session)
                #expect(task.errorName == "userAuthenticationRequired", "\(credentials.keys): \(task.object("error") ?? [:])")
            }
            let session = try await daemon.session(configuration: ["connectionProxyDictionary": Self.socks(proxy, ["SOCKSProxyUsername": username, "SOCKSProxyPassword": password])])
            let mark = proxy.log.mark()
            #expect(try await daemon.downloadDigest(url, in: session) == (try TestFile.digest("1MiB.bin")))
            #expect(await proxy.log.waitForLine(containing: "connected to 127.0.0.1:\(TestFile.port(of: try Peers.nginx()))", since: mark) != nil)
        }
    }

    @Test func anUnreachableProxyIsCannotConnectToHost() async throws {
        // Port 1 on 127.0.0.1: nothing listens there, the kernel refuses at once.
        let port = 1
        try await DaemonFixture.with { daemon in
            let session = try await daemon.session(configuration: ["connectionProxyDictionary": ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": port]])
            let task = try await daemon.run("data", try Peers.nginx() + "/files/hello.txt", in: session)
            #expect(task.errorName == "cannotConnectToHost", "\(task.object("error") ?? [:])")
        }
    }
}
