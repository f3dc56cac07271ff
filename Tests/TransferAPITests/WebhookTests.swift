import LibCrypto
import Foundation
import Synchronization
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Webhooks: every event (or a digest) POSTed to the session's URL, signed with HMAC-SHA256,
/// in order, retried with backoff, never in the way of a transfer, resumed after a restart. The
/// in-process origin is the receiver.
@Suite struct WebhookTests {
    static let secret = "whsec-0123456789abcdef"

    /// Fast retries so a test sees several within a second.
    static func fastRetries(_ configuration: inout DaemonConfiguration) {
        configuration.service.webhookPolicy.backoff = Backoff(base: 0.05, cap: 0.2)
        configuration.service.webhookPolicy.digestInterval = 0.5
    }

    /// A session posting to `url`.
    private func session(_ daemon: DaemonFixture, _ url: String, mode: String = "each") async throws -> String {
        try #require(try await daemon.createSession(["webhook": ["url": url, "secret": Self.secret, "mode": mode]]).string("id"))
    }

    /// Tasks with an unsupported scheme complete at once with two events each:
    /// didFinishCollectingMetrics, then didCompleteWithError.
    private func quickTasks(_ daemon: DaemonFixture, in session: String, count: Int) async throws {
        for index in 0..<count { _ = try await daemon.dataTask(in: session, ["url": "gopher://127.0.0.1/\(index)"]) }
    }

    /// The events of a delivery whose signature verifies; nil (and an issue) if it does not.
    private func verifiedEvents(_ request: OriginRequest, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]]? {
        let header = try #require(request.header("X-Transferd-Signature"), "unsigned delivery", sourceLocation: sourceLocation)
        var parts: [String: String] = [:]
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2 { parts[pair[0]] = pair[1] }
        }
        let timestamp = try #require(parts["t"].flatMap { Int($0) }, "\(header)", sourceLocation: sourceLocation)
        #expect(abs(Double(timestamp) - Date().timeIntervalSince1970) < 120, sourceLocation: sourceLocation)
        let mac = HMACSHA256.code(for: Data("\(timestamp).".utf8) + request.body, key: Data(Self.secret.utf8))
        let expected = mac.map { String(format: "%02x", $0) }.joined()
        guard parts["v1"] == expected else {
            Issue.record("the signature does not verify: \(header)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(request.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
        let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any], sourceLocation: sourceLocation)
        return body["events"] as? [[String: Any]]
    }

    private func waitForWebhook(_ daemon: DaemonFixture, _ sid: String, timeout: Double = 20, until predicate: ([String: Any]) -> Bool) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let webhook = try #require(try await daemon.session(sid).object("webhook"))
            if predicate(webhook) { return webhook }
            try #require(Date() < deadline, "webhook never got there: \(webhook)")
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func eachEventIsPostedSignedAndInOrder() async throws {
        let receiver = try OriginServer { _ in .respond(status: 204) }
        defer { receiver.stop() }
        try await DaemonFixture.with(configure: Self.fastRetries) { daemon in
            let sid = try await session(daemon, receiver.url("/hook"))
            try await quickTasks(daemon, in: sid, count: 5)
            let feed = try await daemon.allEvents(sid)
            #expect(feed.compactMap { $0.string("type") } == Array(repeating: ["didFinishCollectingMetrics", "didCompleteWithError"], count: 5).flatMap { $0 })
            let last = try #require(feed.last?.int("seq"))
            let webhook = try await waitForWebhook(daemon, sid) { $0.int("deliveredThrough") == last }
            #expect(webhook.int("failedDeliveries") == 0 && webhook.isNull("lastError"))
            #expect(webhook.string("url") == receiver.url("/hook") && webhook.string("mode") == "each")
            #expect(parseTimestamp(webhook["lastDeliveredAt"]) != nil)

            let posts = receiver.requests
            #expect(posts.count == 10 && posts.allSatisfy { $0.method == "POST" && $0.path == "/hook" })
            var delivered: [[String: Any]] = []
            for post in posts {
                let events = try #require(try verifiedEvents(post))
                #expect(events.count == 1)
                #expect(post.header("X-Transferd-Session") == sid)
                delivered += events
            }
            #expect(delivered.count == feed.count && zip(delivered, feed).allSatisfy { jsonEqual($0, $1) }, "not the feed, in order")
            // The secret is write-only: no answer carries it.
            #expect(!(try await daemon.get("/v1/sessions/\(sid)").text.contains(Self.secret)))
            #expect(!(try await daemon.get("/v1/sessions").text.contains(Self.secret)))
        }
    }

    @Test func failuresAreRetriedInOrderUntilDelivered() async throws {
        // Requests 0 and 1 get a 500, request 2 a dropped connection, the rest succeed.
        let count = Atomic<Int>(0)
        let receiver = try OriginServer { _ in
            switch count.wrappingAdd(1, ordering: .relaxed).oldValue {
            case 0, 1: return .respond(status: 500)
            case 2: return .closeWithoutResponse
            default: return .respond(status: 200)
            }
        }
        defer { receiver.stop() }
        try await DaemonFixture.with(configure: Self.fastRetries) { daemon in
            let sid = try await session(daemon, receiver.url("/hook"))
            try await quickTasks(daemon, in: sid, count: 3)
            let feed = try await daemon.allEvents(sid)
            let last = try #require(feed.last?.int("seq"))
            let webhook = try await waitForWebhook(daemon, sid) { $0.int("deliveredThrough") == last }
            #expect(webhook.int("failedDeliveries") == 0)
            #expect(webhook.string("lastError") != nil, "the failures are visible: \(webhook)")
            let posts = receiver.requests
            // Three tasks, two events each (metrics, completion): 6 events, the first posted 4 times.
            #expect(feed.count == 6, "\(feed)")
            #expect(posts.count == 9, "\(posts)")
            // The first event was tried three times before it went through; then the others, in order.
            let seqs = try posts.map { try #require(try verifiedEvents($0)?.first?.int("seq")) }
            #expect(seqs == ([feed[0], feed[0], feed[0]] + feed).compactMap { $0.int("seq") }, "\(seqs)")
            // Our retries after the 500s waited (backoff), never back to back. (After the dropped
            // connection curl itself retries once at once on a new connection: a reused
            // connection that dies before answering is not counted as an attempt.)
            let gaps = zip(posts, posts.dropFirst()).prefix(2).map { seconds(between: $0.receivedAt, $1.receivedAt) }
            #expect(gaps.allSatisfy { $0 >= 0.02 }, "\(gaps)")
        }
    }

    @Test func aDeliveryIsGivenUpAfterItsLastAttemptAndTheNextGoesOn() async throws {
        let failing = Atomic<Bool>(true)
        let receiver = try OriginServer { _ in failing.load(ordering: .relaxed) ? .respond(status: 503) : .respond(status: 200) }
        defer { receiver.stop() }
        try await DaemonFixture.with(configure: { Self.fastRetries(&$0); $0.service.webhookPolicy.maxAttempts = 3 }) { daemon in
            let sid = try await session(daemon, receiver.url("/hook"))
            // One task: two events (metrics, completion), each tried 3 times and given up in turn.
            try await quickTasks(daemon, in: sid, count: 1)
            let failed = try await daemon.allEvents(sid).compactMap { $0.int("seq") }
            try #require(failed.count == 2, "\(failed)")
            let webhook = try await waitForWebhook(daemon, sid) { $0.int("failedDeliveries") == 2 }
            #expect(webhook.int("deliveredThrough") == failed.last)
            #expect(webhook.string("lastError") == "HTTP 503")
            let tried = try receiver.requests.map { try #require(try verifiedEvents($0)?.first?.int("seq")) }
            #expect(tried == [failed[0], failed[0], failed[0], failed[1], failed[1], failed[1]], "\(tried)")
            failing.store(false, ordering: .relaxed)
            try await quickTasks(daemon, in: sid, count: 1)
            let fresh = try await daemon.allEvents(sid).compactMap { $0.int("seq") }.filter { $0 > failed[1] }
            #expect(fresh.count == 2, "\(fresh)")
            let second = try #require(fresh.last)
            _ = try await waitForWebhook(daemon, sid) { $0.int("deliveredThrough") == second }
            #expect(try await daemon.session(sid).object("webhook")?.int("failedDeliveries") == 2)
            let next = try receiver.requests.dropFirst(6).map { try #require(try verifiedEvents($0)?.first?.int("seq")) }
            #expect(next == fresh, "\(next)")
        }
    }

    @Test func digestModeBatchesTheEventsSinceTheLastDelivery() async throws {
        let receiver = try OriginServer { _ in .respond(status: 200) }
        defer { receiver.stop() }
        try await DaemonFixture.with(configure: Self.fastRetries) { daemon in
            let sid = try await session(daemon, receiver.url("/digest"), mode: "digest")
            try await quickTasks(daemon, in: sid, count: 6)
            let feed = try await daemon.allEvents(sid)
            let last = try #require(feed.last?.int("seq"))
            _ = try await waitForWebhook(daemon, sid) { $0.int("deliveredThrough") == last }
            let posts = receiver.requests
            #expect(posts.count < feed.count, "no batching: \(posts.count) posts for \(feed.count) events")
            let delivered = try posts.flatMap { try #require(try verifiedEvents($0)) }
            #expect(delivered.count == feed.count && zip(delivered, feed).allSatisfy { jsonEqual($0, $1) })
        }
    }

    @Test func aSlowReceiverDoesNotSlowATransfer() async throws {
        let receiver = try OriginServer { _ in .delayed(by: .seconds(6), then: .respond(status: 200)) }
        defer { receiver.stop() }
        let payload = Data(repeating: 42, count: 2 << 20)
        let origin = try OriginServer { _ in .respond(body: payload) }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: Self.fastRetries) { daemon in
            let sid = try await session(daemon, receiver.url("/slow"))
            let start = ContinuousClock.now
            let id = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/big")]).int("id"))
            #expect(try await daemon.waitForCompletion(id).isNull("error"))
            let elapsed = seconds(since: start)
            #expect(elapsed < 3, "the transfer took \(elapsed) s behind a receiver that answers in 6 s")
            #expect(try await daemon.body(id).body == payload)
            // The receiver holds the first delivery: nothing is delivered yet.
            #expect(await receiver.waitForRequests(1))
            #expect(try await daemon.session(sid).object("webhook")?.int("deliveredThrough") == 0)
        }
    }

    @Test func deliveryResumesAfterARestartFromTheStoredCursor() async throws {
        let failing = Atomic<Bool>(false)
        let receiver = try OriginServer { _ in failing.load(ordering: .relaxed) ? .respond(status: 500) : .respond(status: 200) }
        defer { receiver.stop() }
        try await DaemonFixture.with(configure: Self.fastRetries) { daemon in
            let sid = try await session(daemon, receiver.url("/hook"))
            try await quickTasks(daemon, in: sid, count: 2)
            let delivered = try #require(try await daemon.allEvents(sid).last?.int("seq"))
            _ = try await waitForWebhook(daemon, sid) { $0.int("deliveredThrough") == delivered }
            failing.store(true, ordering: .relaxed)
            try await quickTasks(daemon, in: sid, count: 1)
            let pending = try #require(try await daemon.allEvents(sid).last?.int("seq"))
            // Four events delivered (two tasks, metrics and completion each), then a failed try.
            #expect(await receiver.waitForRequests(5))
            daemon.stop()
            failing.store(false, ordering: .relaxed)

            let second = try daemon.restarted()
            defer { second.stop() }
            _ = try await waitForWebhook(second, sid) { $0.int("deliveredThrough") == pending }
            // Every POST the receiver saw (the failed tries carried the pending event too).
            let seqs = try receiver.requests.compactMap { try verifiedEvents($0)?.first?.int("seq") }
            #expect(seqs.filter { $0 <= delivered }.count == 4, "events delivered before the restart went again: \(seqs)")
            #expect(seqs.last == pending)
        }
    }

    @Test func webhooksAreValidated() async throws {
        try await DaemonFixture.with { daemon in
            let cases: [([String: Any], Int, String, String)] = [
                (["url": "gopher://127.0.0.1/x", "secret": Self.secret], 422, "invalid_value", "webhook.url"),
                (["url": "not a url", "secret": Self.secret], 422, "invalid_url", "webhook.url"),
                (["url": "http://127.0.0.1/x", "secret": "short"], 422, "invalid_value", "webhook.secret"),
                // 15 characters, 30 bytes: the length is counted in characters, as the schema's minLength
                (["url": "http://127.0.0.1/x", "secret": String(repeating: "é", count: 15)], 422, "invalid_value", "webhook.secret"),
                (["url": "http://127.0.0.1/x"], 400, "missing_field", "webhook.secret"),
                (["url": "http://127.0.0.1/x", "secret": Self.secret, "mode": "sometimes"], 422, "invalid_value", "webhook.mode"),
                (["url": "http://127.0.0.1/x", "secret": Self.secret, "retries": 3], 400, "unknown_field", "webhook.retries"),
            ]
            for (webhook, status, code, field) in cases {
                let response = try await daemon.post("/v1/sessions", json: ["webhook": webhook])
                #expect(response.status == status, "\(webhook): \(response)")
                #expect(response.errorCode == code && response.error?.string("field") == field, "\(webhook): \(response)")
            }
            let list = try #require(try await daemon.get("/v1/sessions").object()["items"] as? [[String: Any]])
            #expect(list.count == 1, "a refused session was created")
        }
    }
}

private func seconds(between a: ContinuousClock.Instant, _ b: ContinuousClock.Instant) -> Double {
    let d = b - a
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
