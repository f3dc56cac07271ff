import Foundation
import Testing
import TestSupport

/// Cookies against a real httpbin on 127.0.0.1 (started by scripts/test.sh): what sessions
/// store and send, per URLSession's rules. httpbin's /cookies/set answers 302 to /cookies with
/// the Set-Cookie on the 302, so the cookie reaching /cookies proves the Cookie header is
/// recomputed for the redirect hop libcurl makes itself.
@Suite struct CookiePeerTests {
    /// The same httpbin under another host name: another site as far as cookies go.
    private static func otherHost(_ httpbin: String) -> String {
        httpbin.replacingOccurrences(of: "127.0.0.1", with: "localhost")
    }

    @Test func defaultSessionsShareOneJarEphemeralSessionsEachHaveTheirOwn() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let first = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            let second = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            let ephemeral = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let otherEphemeral = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))

            #expect(try await daemon.cookiesSeen(in: first, ["url": "\(httpbin)/cookies/set?shared=d1"]) == ["shared": "d1"])
            #expect(try await daemon.cookiesSeen(in: second, ["url": "\(httpbin)/cookies"]) == ["shared": "d1"])
            #expect(try await daemon.cookiesSeen(in: "shared", ["url": "\(httpbin)/cookies"]) == ["shared": "d1"])

            #expect(try await daemon.cookiesSeen(in: ephemeral, ["url": "\(httpbin)/cookies/set?private=e1"]) == ["private": "e1"])
            #expect(try await daemon.cookiesSeen(in: ephemeral, ["url": "\(httpbin)/cookies"]) == ["private": "e1"])
            #expect(try await daemon.cookiesSeen(in: otherEphemeral, ["url": "\(httpbin)/cookies"]) == [:])
            #expect(try await daemon.cookiesSeen(in: first, ["url": "\(httpbin)/cookies"]) == ["shared": "d1"])

            #expect(try await daemon.jarNames(second) == ["shared"])
            #expect(try await daemon.jarNames(ephemeral) == ["private"])
            #expect(try await daemon.jarNames(otherEphemeral).isEmpty)
        }
    }

    @Test func theNeverPolicyStoresNothingButStillSends() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let never = try #require(try await daemon.createSession(["kind": "ephemeral", "configuration": ["httpCookieAcceptPolicy": "never"]]).string("id"))
            #expect(try await daemon.cookiesSeen(in: never, ["url": "\(httpbin)/cookies/set?a=1"]) == [:])
            #expect(try await daemon.jar(never).isEmpty)
            // Accepting is what the policy governs: a cookie the client put is sent.
            #expect(try await daemon.putCookies(never, [["name": "given", "value": "g", "domain": "127.0.0.1"]]).status == 200)
            #expect(try await daemon.cookiesSeen(in: never, ["url": "\(httpbin)/cookies/set?b=2"]) == ["given": "g"])
            #expect(try await daemon.jarNames(never) == ["given"])
        }
    }

    @Test func cookiesOffForTheSessionOrTheRequestAreNeitherSentNorStored() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let off = try #require(try await daemon.createSession(["kind": "ephemeral", "configuration": ["httpShouldSetCookies": false]]).string("id"))
            let on = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            for session in [off, on] {
                #expect(try await daemon.putCookies(session, [["name": "seeded", "value": "s", "domain": "127.0.0.1"]]).status == 200)
            }
            #expect(try await daemon.cookiesSeen(in: off, ["url": "\(httpbin)/cookies/set?a=1"]) == [:])
            #expect(try await daemon.jarNames(off) == ["seeded"])

            let request: [String: Any] = ["url": "\(httpbin)/cookies/set?b=2", "httpShouldHandleCookies": false]
            #expect(try await daemon.cookiesSeen(in: on, request) == [:])
            #expect(try await daemon.jarNames(on) == ["seeded"])
            let id = try #require(try await daemon.dataTask(in: on, ["url": "\(httpbin)/get", "httpShouldHandleCookies": false]).int("id"))
            #expect(try await daemon.task(id).value(at: "originalRequest.httpShouldHandleCookies") as? Bool == false)
            // The control: the same request with cookies on sends and stores.
            #expect(try await daemon.cookiesSeen(in: on, ["url": "\(httpbin)/cookies/set?b=2"]) == ["seeded": "s", "b": "2"])
        }
    }

    @Test func onlyFromMainDocumentDomainRefusesCookiesOfAnotherSite() async throws {
        let httpbin = try Peers.httpbin()
        let elsewhere = Self.otherHost(httpbin)
        try await DaemonFixture.with { daemon in
            // The default policy is onlyFromMainDocumentDomain (URLSession's).
            let session = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let thirdParty: [String: Any] = ["url": "\(httpbin)/cookies/set?third=1", "mainDocumentURL": "\(elsewhere)/page"]
            #expect(try await daemon.cookiesSeen(in: session, thirdParty) == [:])
            #expect(try await daemon.jar(session).isEmpty)
            let id = try #require(try await daemon.dataTask(in: session, thirdParty).int("id"))
            #expect(try await daemon.task(id).value(at: "originalRequest.mainDocumentURL") as? String == "\(elsewhere)/page")

            // Same site as the main document: accepted; no mainDocumentURL: the request's own URL.
            #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/cookies/set?first=1", "mainDocumentURL": "\(httpbin)/"]) == ["first": "1"])
            #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/cookies/set?own=1"]) == ["first": "1", "own": "1"])

            // always accepts the third party's cookie.
            let always = try #require(try await daemon.createSession(["kind": "ephemeral", "configuration": ["httpCookieAcceptPolicy": "always"]]).string("id"))
            #expect(try await daemon.cookiesSeen(in: always, thirdParty) == ["third": "1"])
        }
    }

    @Test func eachHopOfARedirectChainGetsTheCookiesOfItsOwnHost() async throws {
        let httpbin = try Peers.httpbin()
        let elsewhere = Self.otherHost(httpbin)
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            #expect(try await daemon.putCookies(session, [
                ["name": "here", "value": "1", "domain": "127.0.0.1"],
                ["name": "there", "value": "2", "domain": "localhost"],
            ]).status == 200)
            let target = "\(elsewhere)/cookies".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            // 127.0.0.1 redirects to localhost: the second hop carries localhost's cookie only.
            #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/redirect-to?url=\(target)"]) == ["there": "2"])
            #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/cookies"]) == ["here": "1"])
        }
    }

    @Test func aRequestsOwnCookieHeaderIsKeptAndGetsNoJarCookies() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            #expect(try await daemon.putCookies(session, [["name": "jar", "value": "j", "domain": "127.0.0.1"]]).status == 200)
            #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/cookies", "headers": ["Cookie": "mine=m"]]) == ["mine": "m"])
            #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/cookies"]) == ["jar": "j"])
        }
    }

    @Test func attributesFromTheServerAreKeptAndReported() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let header = "k=v; Max-Age=3600; Path=/cookies; HttpOnly; SameSite=Strict"
            let query = header.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            _ = try await daemon.fetchJSON(in: session, ["url": "\(httpbin)/response-headers?Set-Cookie=\(query)"])
            let cookie = try #require(try await daemon.jar(session).first)
            #expect(cookie.string("domain") == "127.0.0.1" && cookie.string("path") == "/cookies")
            #expect(cookie.bool("isHTTPOnly") == true && cookie.bool("isSecure") == false && cookie.bool("isSessionOnly") == false)
            #expect(cookie.string("sameSitePolicy") == "strict")
            let expires = try #require(parseTimestamp(cookie["expiresDate"]))
            #expect(abs(expires.timeIntervalSinceNow - 3600) < 120)
            // Path: sent to /cookies, not to /get.
            #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/cookies"]) == ["k": "v"])
            let get = try await daemon.fetchJSON(in: session, ["url": "\(httpbin)/get"])
            #expect(get.value(at: "headers.Cookie") == nil)
        }
    }

    @Test func persistentCookiesOfDefaultSessionsSurviveARestartSessionCookiesDoNot() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            let persistent = "kept=k; Max-Age=3600; Path=/".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            _ = try await daemon.fetchJSON(in: session, ["url": "\(httpbin)/response-headers?Set-Cookie=\(persistent)"])
            #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/cookies/set?transient=t"]) == ["kept": "k", "transient": "t"])
            daemon.stop()

            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await second.cookiesSeen(in: session, ["url": "\(httpbin)/cookies"]) == ["kept": "k"])
            let fresh = try #require(try await second.createSession(["kind": "background", "identifier": "cookies"]).string("id"))
            #expect(try await second.cookiesSeen(in: fresh, ["url": "\(httpbin)/cookies"]) == ["kept": "k"], "background sessions share the jar")
        }
    }

    @Test func anEphemeralSessionsCookiesAndBodiesNeverReachTheDisk() async throws {
        let httpbin = try Peers.httpbin()
        let secret = "eph\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        let control = "dft\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        // Values a client puts: they are in nothing but the cookie jars (no task, no body).
        let secretPut = "ephput\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        let controlPut = "dftput\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        try await DaemonFixture.with { daemon in
            let ephemeral = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let recorded = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            for (session, value) in [(ephemeral, secret), (recorded, control)] {
                // A persistent cookie (the kind a default session writes); httpbin echoes the
                // header in its body, so the body carries the value too.
                let header = "marker=\(value); Max-Age=3600".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let echo = try await daemon.fetchJSON(in: session, ["url": "\(httpbin)/response-headers?Set-Cookie=\(header)"])
                #expect((echo["Set-Cookie"] as? String)?.contains(value) == true)
                #expect(try await daemon.cookiesSeen(in: session, ["url": "\(httpbin)/cookies"]) == ["marker": value])
            }
            let expires = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))
            for (session, value) in [(ephemeral, secretPut), (recorded, controlPut)] {
                #expect(try await daemon.putCookies(session, [["name": "put", "value": value, "domain": "127.0.0.1", "expiresDate": expires]]).status == 200)
            }
            daemon.stop()
            #expect(EphemeralDiskScan.files(under: daemon.dataPath, containing: controlPut).contains { $0.hasPrefix("transferd.sqlite3") },
                    "the control (a default session's put cookie) was not found in the database: the scan proves nothing")
            let files = EphemeralDiskScan.files(under: daemon.dataPath, containing: control)
            #expect(files.contains { $0.hasPrefix("transferd.sqlite3") }, "the control (a default session's cookie) was not found: the scan proves nothing")
            for value in [secret, secretPut] {
                let leaks = EphemeralDiskScan.files(under: daemon.dataPath, containing: value)
                #expect(leaks.isEmpty, "the ephemeral session's cookie reached: \(leaks)")
            }
        }
    }
}

/// Searches a data folder's files (the database, its WAL, bodies) for bytes.
enum EphemeralDiskScan {
    static func files(under folder: String, containing marker: String) -> [String] {
        let needle = Data(marker.utf8)
        return FileSystemProbe.tree(folder).filter { path in
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + path)) else { return false }
            return data.range(of: needle) != nil
        }
    }
}
