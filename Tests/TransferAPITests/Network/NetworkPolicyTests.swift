import Foundation
import Synchronization
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// The network policy on loopback only (issue 16, "Reaching inside"): a daemon started with
/// `--deny-networks 127.0.0.2/32` and an origin bound to 127.0.0.2 (Linux routes all of
/// 127.0.0.0/8 to lo) standing for the daemon's private network. Tasks, redirect hops, other
/// spellings of the address, stream tasks and webhooks are refused on the resolved address,
/// with cannotConnectToHost and `reason: network_policy`, never retried, and counted; the same
/// requests to 127.0.0.1 work, and the origin on 127.0.0.2 never sees a connection.
@Suite struct NetworkPolicyTests {
    static func denying(_ ranges: String, allowing allowed: String = "") -> (inout DaemonConfiguration) -> Void {
        { configuration in
            configuration.denyNetworks = (try? NetworkRange.list(ranges)) ?? []
            configuration.allowNetworks = (try? NetworkRange.list(allowed)) ?? []
            WebhookTests.fastRetries(&configuration)
        }
    }

    /// The origin standing for the inside: every connection to it is a failure of the policy.
    private static func inside() throws -> OriginServer {
        try OriginServer(address: "127.0.0.2") { _ in .text("inside") }
    }

    /// Runs a task of `kind` for `url` (in `session`) and returns it completed.
    private func run(_ daemon: DaemonFixture, _ url: String, kind: String = "data", in session: String = "shared") async throws -> [String: Any] {
        let id = try #require(try await daemon.createTask(in: session, ["kind": kind, "request": ["url": url]]).int("id"))
        return try await daemon.waitForCompletion(id, timeout: 15)
    }

    /// Expects `task` ended by the policy: -1004 with the policy's reason and a message naming
    /// the refused address and the rule.
    private func expectRefused(_ task: [String: Any], _ address: String, rule: String = "--deny-networks 127.0.0.2/32", sourceLocation: SourceLocation = #_sourceLocation) {
        let error = task.object("error") ?? [:]
        #expect(error.int("code") == -1004 && error.string("name") == "cannotConnectToHost", "\(error)", sourceLocation: sourceLocation)
        #expect(error.string("reason") == "network_policy", "\(error)", sourceLocation: sourceLocation)
        let message = error.string("message") ?? ""
        #expect(message.contains(address) && message.contains("network policy") && message.contains(rule), "\(message)", sourceLocation: sourceLocation)
    }

    private func refusals(_ daemon: DaemonFixture) async throws -> [String: Double] {
        let metrics = try PrometheusText(try await daemon.get("/metrics").text)
        var counts: [String: Double] = [:]
        for kind in ["task", "redirect", "stream", "webhook"] {
            counts[kind] = metrics.value("transferd_network_policy_refusals_total", ["kind": kind])
        }
        return counts
    }

    @Test func tasksAndRedirectsToADeniedAddressAreRefusedInEverySpellingWhileLoopbackWorks() async throws {
        let inside = try Self.inside()
        defer { inside.stop() }
        let outside = try OriginServer { request in
            request.path == "/hop" ? .redirect(to: inside.url("/secret")) : .text("outside")
        }
        defer { outside.stop() }
        try await DaemonFixture.with(configure: Self.denying("127.0.0.2/32")) { daemon in
            #expect(try await refusals(daemon) == ["task": 0, "redirect": 0, "stream": 0, "webhook": 0])
            let allowed = try await run(daemon, outside.url("/page"))
            #expect(allowed.isNull("error"), "\(allowed)")
            #expect(try await daemon.body(try #require(allowed.int("id"))).text == "outside")

            let port = inside.port
            for url in [inside.url("/secret"), "http://2130706434:\(port)/secret", "http://0177.0.0.2:\(port)/secret", "http://0x7f.0.0.2:\(port)/secret"] {
                expectRefused(try await run(daemon, url), "127.0.0.2")
            }
            expectRefused(try await run(daemon, "http://[::ffff:127.0.0.2]:\(port)/secret"), "127.0.0.2")
            expectRefused(try await run(daemon, inside.url("/secret.bin"), kind: "download"), "127.0.0.2")

            // The redirect's first hop, on 127.0.0.1, works; the hop to 127.0.0.2 is refused.
            let redirected = try await run(daemon, outside.url("/hop"))
            expectRefused(redirected, "127.0.0.2")
            #expect(outside.requests.contains { $0.path == "/hop" })
            #expect(redirected.value(at: "currentRequest.url") as? String == inside.url("/secret"), "\(redirected)")

            // A background session would wait for connectivity after cannotConnectToHost; the
            // policy's refusal ends the task at once instead.
            let background = try #require(try await daemon.createSession(["kind": "background", "identifier": "policy"]).string("id"))
            let started = ContinuousClock.now
            expectRefused(try await run(daemon, inside.url("/again.bin"), kind: "download", in: background), "127.0.0.2")
            #expect(seconds(since: started) < 5)

            #expect(try await refusals(daemon) == ["task": 7, "redirect": 1, "stream": 0, "webhook": 0])
            #expect(inside.connectionCount == 0 && inside.requests.isEmpty, "the denied origin was reached")
        }
    }

    @Test func aStreamTaskToADeniedAddressIsRefusedWhileLoopbackConnects() async throws {
        let inside = try Self.inside()
        defer { inside.stop() }
        let outside = try OriginServer { _ in .text("outside") }
        defer { outside.stop() }
        try await DaemonFixture.with(configure: Self.denying("127.0.0.2/32")) { daemon in
            let refused = try #require(try await daemon.createTask(["kind": "stream", "host": "127.0.0.2", "port": inside.port]).int("id"))
            expectRefused(try await daemon.waitForCompletion(refused, timeout: 15), "127.0.0.2")
            let mapped = try #require(try await daemon.createTask(["kind": "stream", "host": "::ffff:127.0.0.2", "port": inside.port]).int("id"))
            expectRefused(try await daemon.waitForCompletion(mapped, timeout: 15), "127.0.0.2")

            let allowed = try #require(try await daemon.createTask(["kind": "stream", "host": "127.0.0.1", "port": outside.port]).int("id"))
            #expect(await outside.waitForOpenConnections(1, timeout: .seconds(10)), "the stream to 127.0.0.1 did not connect")
            #expect(try await daemon.post("/v1/tasks/\(allowed)/cancel").status < 300)
            try await daemon.waitForCompletion(allowed, timeout: 15)

            #expect(try await refusals(daemon)["stream"] == 2)
            #expect(inside.connectionCount == 0, "the denied origin was reached")
        }
    }

    @Test func aWebhookToADeniedAddressIsRefusedAtSubscriptionOrGivenUpAtOnce() async throws {
        let inside = try Self.inside()
        defer { inside.stop() }
        let outside = try OriginServer { _ in .respond(status: 204) }
        defer { outside.stop() }
        try await DaemonFixture.with(configure: Self.denying("127.0.0.2/32")) { daemon in
            let secret = WebhookTests.secret
            // An address literal the policy refuses is refused when it is subscribed.
            for url in [inside.url("/hook"), "http://[::ffff:127.0.0.2]:\(inside.port)/hook"] {
                let response = try await daemon.post("/v1/sessions", json: ["webhook": ["url": url, "secret": secret]])
                #expect(response.status == 400 && response.errorCode == "network_policy", "\(url): \(response)")
                #expect(response.error?.string("field") == "webhook.url" && response.error?.string("message")?.contains("127.0.0.2") == true, "\(response)")
            }
            // Another spelling passes the subscription; each delivery's connection is refused,
            // failed as for an unreachable receiver, and given up at once (no retries).
            let hidden = "http://2130706434:\(inside.port)/hook"
            let sid = try #require(try await daemon.createSession(["webhook": ["url": hidden, "secret": secret]]).string("id"))
            _ = try await daemon.dataTask(in: sid, ["url": "gopher://127.0.0.1/1"])
            let events = try await daemon.allEvents(sid).count
            try #require(events == 2)
            let deadline = Date().addingTimeInterval(10)
            var webhook: [String: Any] = [:]
            while true {
                webhook = try #require(try await daemon.session(sid).object("webhook"))
                if webhook.int("failedDeliveries") == events || Date() > deadline { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(webhook.int("failedDeliveries") == events, "\(webhook)")
            #expect(webhook.string("lastError")?.contains("network policy") == true, "\(webhook)")
            #expect(try await refusals(daemon)["webhook"] == Double(events), "one refusal per delivery, no retries")

            // The same webhook to 127.0.0.1 is delivered.
            let delivered = try #require(try await daemon.createSession(["webhook": ["url": outside.url("/hook"), "secret": secret]]).string("id"))
            _ = try await daemon.dataTask(in: delivered, ["url": "gopher://127.0.0.1/2"])
            #expect(await outside.waitForRequests(2, timeout: .seconds(10)))
            #expect(inside.connectionCount == 0, "the denied origin was reached")
        }
    }

    @Test func anAllowedRangeOpensItsAddressesInsideADeniedOne() async throws {
        let inside = try Self.inside()
        defer { inside.stop() }
        let outside = try OriginServer { _ in .text("outside") }
        defer { outside.stop() }
        try await DaemonFixture.with(configure: Self.denying("127.0.0.0/8", allowing: "127.0.0.2/32")) { daemon in
            let allowed = try await run(daemon, inside.url("/secret"))
            #expect(allowed.isNull("error"), "\(allowed)")
            #expect(try await daemon.body(try #require(allowed.int("id"))).text == "inside")
            expectRefused(try await run(daemon, outside.url("/page")), "127.0.0.1", rule: "--deny-networks 127.0.0.0/8")
            // A name is judged on the addresses it resolves to (localhost: 127.0.0.1, and ::1
            // where nothing listens on that port).
            expectRefused(try await run(daemon, "http://localhost:\(outside.port)/page"), "127.0.0.1", rule: "--deny-networks 127.0.0.0/8")
            #expect(outside.connectionCount == 0)
        }
    }

    @Test func aSessionsProxyIsJudgedLikeAnyConnectionAndAllowedByTheOperator() async throws {
        // An HTTP proxy on the denied address answers itself (absolute-form requests). A session's
        // proxy is the tenant's choice, so naming a denied address as the proxy reaches nothing...
        let proxy = try OriginServer(address: "127.0.0.2") { _ in .text("from the proxy") }
        defer { proxy.stop() }
        let proxied: [String: Any] = ["connectionProxyDictionary": ["HTTPEnable": 1, "HTTPProxy": "127.0.0.2", "HTTPPort": proxy.port]]
        try await DaemonFixture.with(configure: Self.denying("127.0.0.2/32")) { daemon in
            let session = try await daemon.session(configuration: proxied)
            expectRefused(try await run(daemon, "http://origin.invalid/page", in: session), "127.0.0.2", rule: "--deny-networks 127.0.0.2/32")
            #expect(proxy.connectionCount == 0)
        }
        // ...while a proxy the operator allows is used.
        try await DaemonFixture.with(configure: Self.denying("127.0.0.0/8", allowing: "127.0.0.2/32")) { daemon in
            let session = try await daemon.session(configuration: proxied)
            let task = try await run(daemon, "http://origin.invalid/page", in: session)
            #expect(task.isNull("error"), "\(task)")
            #expect(try await daemon.body(try #require(task.int("id"))).text == "from the proxy")
            #expect(proxy.requests.first?.path == "http://origin.invalid/page")
        }
    }
}
