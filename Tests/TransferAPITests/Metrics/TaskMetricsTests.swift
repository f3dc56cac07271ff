import Foundation
import Testing
import TestSupport

/// GET /v1/tasks/{tid}/metrics and didFinishCollectingMetrics, against the in-process origin:
/// one request's phases and counts, a reused connection, a redirect chain, a restart, errors.
@Suite struct TaskMetricsTests {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func date(_ transaction: [String: Any], _ key: String) -> Date? {
        (transaction[key] as? String).flatMap { try? style.parse($0) }
    }

    private static func transactions(_ metrics: [String: Any]) -> [[String: Any]] {
        metrics["transactionMetrics"] as? [[String: Any]] ?? []
    }

    @Test func plainGetThenReusedConnectionThenRedirectChain() async throws {
        let body = String(repeating: "metrics ", count: 500)
        let origin = try OriginServer { request in
            switch request.pathWithoutQuery {
            case "/one": return .redirect(to: "/two", status: 301)
            case "/two": return .redirect(to: "/end", status: 302)
            default: return .text(body)
            }
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let first = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/plain")]).int("id"))
            #expect(try await daemon.waitForCompletion(first).isNull("error"))
            let metrics = try await daemon.get("/v1/tasks/\(first)/metrics").object()
            #expect(metrics.int("redirectCount") == 0)
            let only = try #require(Self.transactions(metrics).first)
            #expect(Self.transactions(metrics).count == 1)
            #expect(only.string("networkProtocolName") == "http/1.1")
            #expect(only.bool("isReusedConnection") == false && only.bool("isProxyConnection") == false)
            #expect(only.string("resourceFetchType") == "networkLoad")
            #expect(only.string("remoteAddress") == "127.0.0.1" && only.int("remotePort") == origin.port)
            #expect(only.string("localAddress") == "127.0.0.1" && (only.int("localPort") ?? 0) > 0)
            #expect(only.int("countOfResponseBodyBytesReceived") == body.utf8.count)
            #expect((only.int("countOfResponseHeaderBytesReceived") ?? 0) > 0 && (only.int("countOfRequestHeaderBytesSent") ?? 0) > 0)
            #expect(only.int("countOfRequestBodyBytesSent") == 0)
            #expect(only.object("request")?.string("url") == origin.url("/plain") && only.object("request")?.string("method") == "GET")
            #expect(only.object("response")?.int("statusCode") == 200)
            let order = ["fetchStartDate", "domainLookupStartDate", "domainLookupEndDate", "connectStartDate", "connectEndDate",
                         "requestStartDate", "requestEndDate", "responseStartDate", "responseEndDate"]
            let dates = order.map { Self.date(only, $0) }
            #expect(dates.allSatisfy { $0 != nil }, "\(only)")
            let known = dates.compactMap { $0 }
            #expect(known == known.sorted(), "phases out of order: \(only)")
            #expect(only.isNull("secureConnectionStartDate") && only.isNull("secureConnectionEndDate"))
            let interval = try #require(metrics.object("taskInterval"))
            #expect((interval.double("duration") ?? -1) >= 0 && interval.string("start") != nil)

            // The same session, the same origin: the connection is reused, no DNS or connect.
            let second = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/again")]).int("id"))
            #expect(try await daemon.waitForCompletion(second).isNull("error"))
            let reused = try #require(Self.transactions(try await daemon.get("/v1/tasks/\(second)/metrics").object()).first)
            #expect(reused.bool("isReusedConnection") == true, "\(reused)")
            #expect(reused.isNull("connectStartDate") && reused.isNull("connectEndDate") && reused.isNull("domainLookupStartDate"))
            #expect(reused.int("localPort") == only.int("localPort"))

            // Two redirects: three transactions with their URLs and statuses.
            let chain = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/one")]).int("id"))
            #expect(try await daemon.waitForCompletion(chain).isNull("error"))
            let chainMetrics = try await daemon.get("/v1/tasks/\(chain)/metrics").object()
            #expect(chainMetrics.int("redirectCount") == 2)
            let hops = Self.transactions(chainMetrics)
            #expect(hops.compactMap { $0.object("request")?.string("url") } == ["/one", "/two", "/end"].map(origin.url))
            #expect(hops.compactMap { $0.object("response")?.int("statusCode") } == [301, 302, 200])
            #expect(hops.last?.int("countOfResponseBodyBytesReceived") == body.utf8.count)
            let ends = hops.compactMap { Self.date($0, "responseEndDate") }
            let starts = hops.compactMap { Self.date($0, "fetchStartDate") }
            #expect(ends.count == 3 && starts.count == 3)
            for index in 1..<min(ends.count, starts.count) { #expect(starts[index] >= ends[index - 1] - 0.001, "hop \(index) starts before the previous ended") }

            // The event: right before didCompleteWithError, with the counts.
            let events = try await daemon.allEvents(sid).filter { $0.int("taskId") == chain }
            let types = events.compactMap { $0.string("type") }
            #expect(Array(types.suffix(2)) == ["didFinishCollectingMetrics", "didCompleteWithError"])
            let event = try #require(events.first { $0.string("type") == "didFinishCollectingMetrics" })
            #expect(event.int("redirectCount") == 2 && event.int("transactionCount") == 3)

            // Kept across a restart, byte for byte.
            let before = try await daemon.get("/v1/tasks/\(chain)/metrics").body
            daemon.stop()
            let second2 = try daemon.restarted()
            defer { second2.stop() }
            #expect(try await second2.get("/v1/tasks/\(chain)/metrics").body == before)
        }
    }

    /// A request that got no answer is a transaction with a null response, as URLSession
    /// reports a failed connection: refused (no connection), after a followed redirect, and
    /// timed out waiting for a response (connection made and request sent).
    @Test func aRequestWithoutAnAnswerIsATransactionWithoutAResponse() async throws {
        let closed = try RefusingPort()
        defer { closed.close() }
        let closedURL = closed.url("/gone")
        let origin = try OriginServer { request in
            switch request.pathWithoutQuery {
            case "/away": return .redirect(to: closedURL, status: 302)
            default: return .delayed(by: .seconds(30), then: .text("too late"))
            }
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))

            let refused = try #require(try await daemon.dataTask(in: sid, ["url": closedURL]).int("id"))
            #expect(try await daemon.waitForCompletion(refused).value(at: "error.code") as? Int == -1004)
            let refusedMetrics = try await daemon.get("/v1/tasks/\(refused)/metrics").object()
            #expect(refusedMetrics.int("redirectCount") == 0)
            #expect(Self.transactions(refusedMetrics).count == 1, "\(refusedMetrics)")
            let attempt = try #require(Self.transactions(refusedMetrics).first)
            #expect(attempt.isNull("response") && attempt.isNull("networkProtocolName"), "\(attempt)")
            #expect(attempt.object("request")?.string("url") == closedURL)
            #expect(attempt.string("resourceFetchType") == "networkLoad" && attempt.bool("isReusedConnection") == false)
            let lookup = ["fetchStartDate", "domainLookupStartDate", "domainLookupEndDate", "connectStartDate"].map { Self.date(attempt, $0) }
            #expect(lookup.allSatisfy { $0 != nil }, "\(attempt)")
            let known = lookup.compactMap { $0 }
            #expect(known == known.sorted(), "phases out of order: \(attempt)")
            for never in ["connectEndDate", "secureConnectionStartDate", "requestStartDate", "requestEndDate", "responseStartDate",
                          "responseEndDate", "remoteAddress", "remotePort", "localAddress", "localPort"] {
                #expect(attempt.isNull(never), "\(never) of a refused connection: \(attempt)")
            }
            #expect(attempt.int("countOfRequestHeaderBytesSent") == 0 && attempt.int("countOfResponseHeaderBytesReceived") == 0)

            // Connected (the origin's first connection) and sent, then no answer within timeoutInterval.
            let stalled = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/stall"), "timeoutInterval": 1]).int("id"))
            #expect(try await daemon.waitForCompletion(stalled).value(at: "error.code") as? Int == -1001)
            let waited = try #require(Self.transactions(try await daemon.get("/v1/tasks/\(stalled)/metrics").object()).first)
            #expect(waited.isNull("response") && waited.isNull("responseStartDate") && waited.isNull("responseEndDate"), "\(waited)")
            let sent = ["fetchStartDate", "connectEndDate", "requestStartDate"].compactMap { Self.date(waited, $0) }
            #expect(sent.count == 3 && sent == sent.sorted(), "\(waited)")
            #expect(waited.string("remoteAddress") == "127.0.0.1" && waited.int("remotePort") == origin.port)
            #expect(waited.bool("isReusedConnection") == false && !waited.isNull("domainLookupEndDate"), "\(waited)")
            #expect((waited.int("localPort") ?? 0) > 0 && (waited.int("countOfRequestHeaderBytesSent") ?? 0) > 0, "\(waited)")

            // A redirect followed to the closed port: the 302, then the unanswered request.
            let away = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/away")]).int("id"))
            #expect(try await daemon.waitForCompletion(away).value(at: "error.code") as? Int == -1004)
            let awayMetrics = try await daemon.get("/v1/tasks/\(away)/metrics").object()
            let hops = Self.transactions(awayMetrics)
            #expect(awayMetrics.int("redirectCount") == 1)
            #expect(hops.compactMap { $0.object("request")?.string("url") } == [origin.url("/away"), closedURL], "\(hops)")
            #expect(hops.first?.object("response")?.int("statusCode") == 302 && hops.last?.isNull("response") == true, "\(hops)")
            if hops.count == 2, let redirectEnd = Self.date(hops[0], "responseEndDate"), let next = Self.date(hops[1], "fetchStartDate") {
                #expect(next >= redirectEnd - 0.001, "the second request starts before the redirect ended: \(hops)")
            } else {
                Issue.record("hops: \(hops)")
            }
        }
    }

    @Test func unknownTaskIsNotFoundAndRunningTaskIsConflict() async throws {
        let origin = try OriginServer { _ in .chunked(headers: [:], chunks: [Data("a".utf8), Data("b".utf8)], interval: .seconds(3)) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let missing = try await daemon.get("/v1/tasks/987654/metrics")
            #expect(missing.status == 404)
            #expect(try missing.object().object("error")?.string("code") == "not_found")
            let sid = try #require(try await daemon.createSession().string("id"))
            let slow = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/slow")]).int("id"))
            let early = try await daemon.get("/v1/tasks/\(slow)/metrics")
            #expect(early.status == 409)
            #expect(try early.object().object("error")?.string("code") == "task_not_completed")
            _ = try await daemon.post("/v1/tasks/\(slow)/cancel")
            _ = try await daemon.waitForCompletion(slow)
            #expect(try await daemon.get("/v1/tasks/\(slow)/metrics").status == 200)
        }
    }
}
