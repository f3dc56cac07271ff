import Foundation
import Testing
import TestSupport

/// Which credential goes where: one host with two realms gets each realm's own credential, and
/// nothing that authorises a request (a stored credential, the request's or the session's
/// Authorization header) follows a redirect to another origin.
@Suite struct CredentialRealmAndRedirectTests {
    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    @Test func eachRealmOfOneHostGetsItsOwnCredential() async throws {
        let origin = try BasicProtectedOrigin.start([
            "/a": .init(realm: "Realm A", user: "alpha", password: "pa"),
            "/b": .init(realm: "Realm B", user: "beta", password: "pb"),
            "/c": .init(realm: "Realm C", user: "gamma", password: "pc"),
        ])
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            try await daemon.putCredential(in: sid, port: origin.port, realm: "Realm A", user: "alpha", password: "pa", persistence: "forSession")
            try await daemon.putCredential(in: sid, port: origin.port, realm: "Realm B", user: "beta", password: "pb", persistence: "permanent")
            // Stored for any realm of the origin: the fallback when no realm matches exactly.
            try await daemon.putCredential(in: sid, port: origin.port, realm: nil, user: "gamma", password: "pc", persistence: "forSession")
            for (path, user) in [("/a", "alpha"), ("/b", "beta"), ("/c", "gamma")] {
                let id = try #require(try await daemon.dataTask(in: sid, ["url": origin.url(path)]).int("id"))
                let task = try await daemon.waitForCompletion(id)
                #expect(task.value(at: "response.statusCode") as? Int == 200, "\(path): \(task)")
                #expect(try await daemon.body(id).text == "hello \(user)")
                let requests = origin.requests.filter { $0.path == path }
                // One try without, then one with the right credential: no wrong one first.
                #expect(requests.map { $0.header("Authorization") } == [nil, Self.basic(user, ["alpha": "pa", "beta": "pb", "gamma": "pc"][user]!)], "\(path)")
                let challenge = try #require(try await daemon.events(of: id, in: sid).first { $0.string("type") == "didReceiveChallenge" })
                #expect(challenge.value(at: "protectionSpace.realm") as? String == "Realm \(path.dropFirst().uppercased())")
            }
            // A password reaches neither the feed nor a task record.
            let feed = try await daemon.get("/v1/sessions/\(sid)/events?limit=1000").text
            for secret in ["\"pa\"", "\"pb\"", "\"pc\"", "cGE", "OnBh"] { #expect(!feed.contains(secret), "\(secret) in the feed") }
        }
    }

    @Test func aStoredCredentialIsNotSentToTheOriginARedirectLeadsTo() async throws {
        let elsewhere = try OriginServer { _ in .text("landed") }
        defer { elsewhere.stop() }
        let origin = try BasicProtectedOrigin.start([
            "/start": .init(realm: "R", user: "u", password: "p", then: .redirect(to: elsewhere.url("/landing"), status: 307)),
            "/same": .init(realm: "R", user: "u", password: "p", then: .redirect(to: "/open-after", status: 302)),
        ])
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            try await daemon.putCredential(in: sid, port: origin.port, realm: "R", user: "u", password: "p", persistence: "forSession")
            let away = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/start")]).int("id"))
            let task = try await daemon.waitForCompletion(away)
            let landed = try await daemon.body(away).text
            #expect(task.value(at: "response.statusCode") as? Int == 200 && landed == "landed", "\(task)")
            #expect(origin.requests.filter { $0.path == "/start" }.last?.header("Authorization") == Self.basic("u", "p"), "the control: the origin got the credential")
            let landing = try #require(elsewhere.requests.first)
            #expect(landing.header("Authorization") == nil, "the credential followed the redirect to port \(elsewhere.port)")

            // The control: a redirect within the origin keeps it.
            let same = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/same")]).int("id"))
            _ = try await daemon.waitForCompletion(same)
            #expect(origin.requests.first { $0.path == "/open-after" }?.header("Authorization") == Self.basic("u", "p"))
        }
    }

    @Test func authorizationHeadersOfTheRequestAndTheSessionStopAtAnotherOrigin() async throws {
        let httpbin = try Peers.httpbin()
        let elsewhere = try OriginServer { request in .text("seen \(request.path)") }
        defer { elsewhere.stop() }
        try await DaemonFixture.with { daemon in
            let sessionHeader = try #require(try await daemon.createSession([
                "configuration": ["httpAdditionalHeaders": ["Authorization": "Bearer session-token"]],
            ]).string("id"))
            func via(_ target: String) -> String {
                "\(httpbin)/redirect-to?url=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            }
            let tasks = [
                try #require(try await daemon.dataTask(in: sessionHeader, ["url": via(elsewhere.url("/from-session"))]).int("id")),
                try #require(try await daemon.dataTask(["url": via(elsewhere.url("/from-request")), "headers": ["Authorization": "Bearer request-token"]]).int("id")),
                // The control: sent straight to the origin, the header arrives.
                try #require(try await daemon.dataTask(["url": elsewhere.url("/direct"), "headers": ["Authorization": "Bearer request-token"]]).int("id")),
            ]
            for id in tasks { #expect(try await daemon.waitForCompletion(id).value(at: "response.statusCode") as? Int == 200) }
            let seen = Dictionary(elsewhere.requests.map { ($0.path, $0.header("Authorization") ?? "none") }) { a, _ in a }
            #expect(seen == ["/from-session": "none", "/from-request": "none", "/direct": "Bearer request-token"])
            // And httpbin itself (the first origin) did get the session's header.
            let echo = try #require(try await daemon.dataTask(in: sessionHeader, ["url": "\(httpbin)/headers"]).int("id"))
            _ = try await daemon.waitForCompletion(echo)
            #expect(try await daemon.body(echo).object().value(at: "headers.Authorization") as? String == "Bearer session-token")
        }
    }

    @Test func aChallengeAtTheOriginARedirectLedToIsAnsweredThereWithoutTheRequestsOwnHeader() async throws {
        let httpbin = try Peers.httpbin()
        let origin = try BasicProtectedOrigin.start(["/guarded": .init(realm: "G", user: "u", password: "p")])
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            try await daemon.putCredential(in: sid, port: origin.port, realm: "G", user: "u", password: "p", persistence: "forSession")
            let target = origin.url("/guarded").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let id = try #require(try await daemon.dataTask(in: sid, [
                "url": "\(httpbin)/redirect-to?url=\(target)", "headers": ["Authorization": "Bearer meant-for-httpbin"],
            ]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.value(at: "response.statusCode") as? Int == 200, "\(task)")
            // The answer starts at the challenged origin: its credential, never the header meant for httpbin.
            #expect(origin.requests.map { $0.header("Authorization") } == [nil, Self.basic("u", "p")])
        }
    }
}
