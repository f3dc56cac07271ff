import Foundation
import Testing
import TestSupport

/// HTTP/2 against nginx (h2 by ALPN over TLS, and h2c with prior knowledge), read through
/// GET /v1/tasks/{tid}/metrics: tasks started together multiplexed on one connection, the
/// negotiated protocol per task, the TLS phase dates, the session's `httpVersion`, and the
/// task priority reaching the wire as the stream weight (`HTTP2PriorityProbe`).
@Suite struct HTTP2Tests {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func date(_ transaction: [String: Any], _ key: String) -> Date? {
        (transaction[key] as? String).flatMap { try? style.parse($0) }
    }

    /// The only transaction of a completed task (no redirects here).
    private static func transaction(_ daemon: DaemonFixture, _ id: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let transactions = try await daemon.transactions(ofTask: id)
        try #require(transactions.count == 1, "task \(id): \(transactions)", sourceLocation: sourceLocation)
        return transactions[0]
    }

    /// A session trusting the test CA, with `extra` configuration.
    private static func session(_ daemon: DaemonFixture, _ extra: [String: Any] = [:]) async throws -> String {
        var configuration: [String: Any] = ["tlsCABundle": try Peers.tlsCertificateAuthorityPEM()]
        configuration.merge(extra) { _, new in new }
        return try await daemon.session(configuration: configuration)
    }

    /// Phase dates that must be present and in this order on a new TLS connection.
    private static let tlsPhases = ["fetchStartDate", "domainLookupStartDate", "domainLookupEndDate", "connectStartDate",
                                    "secureConnectionStartDate", "secureConnectionEndDate", "connectEndDate",
                                    "requestStartDate", "requestEndDate", "responseStartDate", "responseEndDate"]

    private static func expectTLSPhasesInOrder(_ transaction: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
        let dates = tlsPhases.map { date(transaction, $0) }
        #expect(dates.allSatisfy { $0 != nil }, "a phase is missing: \(transaction)", sourceLocation: sourceLocation)
        let known = dates.compactMap { $0 }
        // Non-decreasing: dates have millisecond resolution, and a loopback handshake can take less.
        #expect(known == known.sorted(), "phases out of order: \(transaction)", sourceLocation: sourceLocation)
    }

    @Test func fiveDownloadsStartedTogetherAreStreamsOfOneH2Connection() async throws {
        // /slow/ sends each response at 256 KiB/s, so a 1 MiB download takes about 4 s: five
        // taken in turn on one connection would take 20 s and not overlap.
        let origin = try Peers.tls(.http2)
        let expected = try TestFile.digest("1MiB.bin")
        try await DaemonFixture.with { daemon in
            let sid = try await Self.session(daemon)
            // One batch: all five are admitted in the same engine turn, before any connection is up.
            let specs = (0..<5).map { index in
                ["kind": "download", "request": ["url": origin + "/slow/1MiB.bin?copy=\(index)"]] as [String: Any]
            }
            let response = try await daemon.post("/v1/sessions/\(sid)/tasks:batch", json: ["tasks": specs])
            try #require(response.status == 201, "batch: \(response)")
            let ids = (try response.object()["tasks"] as? [[String: Any]] ?? []).compactMap { $0.int("id") }
            try #require(ids.count == 5)
            var transactions: [[String: Any]] = []
            for id in ids {
                let task = try await daemon.waitForCompletion(id)
                try #require(task.isNull("error"), "task \(id): \(task.object("error") ?? [:])")
                #expect(try sha256(ofFile: try #require(task.string("location"))) == expected, "task \(id) is not byte-identical")
                transactions.append(try await Self.transaction(daemon, id))
            }
            #expect(transactions.map { $0.string("networkProtocolName") } == Array(repeating: "h2", count: 5), "\(transactions)")
            // Exactly one transaction opened the connection; the four others were its streams.
            let fresh = transactions.filter { $0.bool("isReusedConnection") == false }
            #expect(fresh.count == 1, "new connections: \(fresh.count) of 5: \(transactions.map { $0.bool("isReusedConnection") ?? false })")
            let localPorts = Set(transactions.compactMap { $0.int("localPort") })
            #expect(localPorts.count == 1, "local ports: \(localPorts)")
            #expect(Set(transactions.compactMap { $0.int("remotePort") }) == [Int(TestFile.port(of: origin))])
            // At the same time, not in turn: every request went out before any response ended.
            let lastRequest = transactions.compactMap { Self.date($0, "requestStartDate") }.max()
            let firstEnd = transactions.compactMap { Self.date($0, "responseEndDate") }.min()
            if let lastRequest, let firstEnd {
                #expect(lastRequest < firstEnd, "the streams did not overlap: last request \(lastRequest), first end \(firstEnd)")
            } else {
                Issue.record("dates missing: \(transactions)")
            }
            if let opener = fresh.first { Self.expectTLSPhasesInOrder(opener) }
            for reused in transactions where reused.bool("isReusedConnection") == true {
                #expect(reused.isNull("connectStartDate") && reused.isNull("secureConnectionStartDate"), "\(reused)")
            }
        }
    }

    @Test func anHTTP11OnlyTLSOriginReportsHTTP11WithItsTLSPhases() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try await Self.session(daemon)
            let task = try await daemon.run("data", try Peers.tls(.valid) + "/files/hello.txt", in: sid)
            try #require(task.isNull("error"), "\(task.object("error") ?? [:])")
            let transaction = try await Self.transaction(daemon, try #require(task.int("id")))
            #expect(transaction.string("networkProtocolName") == "http/1.1")
            #expect(transaction.bool("isReusedConnection") == false)
            Self.expectTLSPhasesInOrder(transaction)
        }
    }

    @Test func httpVersionHTTP11KeepsAnH2OriginOnHTTP11() async throws {
        let url = try Peers.tls(.http2) + "/files/hello.txt"
        try await DaemonFixture.with { daemon in
            let http11 = try await Self.session(daemon, ["httpVersion": "http1.1"])
            let session = try await daemon.session(http11)
            #expect(session.object("configuration")?.string("httpVersion") == "http1.1")
            let task = try await daemon.run("data", url, in: http11)
            try #require(task.isNull("error"), "\(task.object("error") ?? [:])")
            #expect(try await Self.transaction(daemon, try #require(task.int("id"))).string("networkProtocolName") == "http/1.1")
            // The same URL in an `auto` session: h2.
            let auto = try await Self.session(daemon)
            let h2 = try await daemon.run("data", url + "?auto", in: auto)
            try #require(h2.isNull("error"), "\(h2.object("error") ?? [:])")
            #expect(try await Self.transaction(daemon, try #require(h2.int("id"))).string("networkProtocolName") == "h2")
        }
    }

    @Test func h2cWithPriorKnowledgeSpeaksH2OverCleartext() async throws {
        let url = try Peers.h2c() + "/files/1MiB.bin"
        let expected = try TestFile.digest("1MiB.bin")
        try await DaemonFixture.with { daemon in
            let prior = try await daemon.session(configuration: ["httpVersion": "h2-prior-knowledge"])
            // Two at once, then a third: with libcurl 7.x each takes its own connection (a reused
            // prior-knowledge connection fails there), and all must succeed.
            let specs = (0..<2).map { ["kind": "download", "request": ["url": url + "?together=\($0)"]] as [String: Any] }
            let response = try await daemon.post("/v1/sessions/\(prior)/tasks:batch", json: ["tasks": specs])
            try #require(response.status == 201, "batch: \(response)")
            var ids = (try response.object()["tasks"] as? [[String: Any]] ?? []).compactMap { $0.int("id") }
            for id in ids { _ = try await daemon.waitForCompletion(id) }
            ids.append(try #require(try await daemon.createTask(in: prior, ["kind": "download", "request": ["url": url + "?after"]]).int("id")))
            for id in ids {
                let task = try await daemon.waitForCompletion(id)
                try #require(task.isNull("error"), "task \(id): \(task.object("error") ?? [:])")
                #expect(try sha256(ofFile: try #require(task.string("location"))) == expected)
                let transaction = try await Self.transaction(daemon, id)
                #expect(transaction.string("networkProtocolName") == "h2", "\(transaction)")
                #expect(transaction.isNull("secureConnectionStartDate") && transaction.isNull("secureConnectionEndDate"))
            }
            // The shared session (`auto`) cannot talk to this h2-only port: its HTTP/1.1 request
            // fails. It must not ride on the prior-knowledge session's connection (it did,
            // and succeeded, before sessions with their own httpVersion got their own pool).
            let plain = try await daemon.run("data", url + "?plain", in: "shared")
            #expect(plain.object("error") != nil, "an HTTP/1.1 request to the h2c-only port succeeded: \(plain)")
        }
    }

    @Test func thePriorityOfEachTaskIsItsStreamWeightOnTheWire() async throws {
        let probe = try HTTP2PriorityProbe()
        defer { probe.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try await daemon.session(configuration: ["httpVersion": "h2-prior-knowledge"])
            // One at a time, so the streams arrive in this order; the probe never answers, so
            // all three stay open.
            var ids: [Int] = []
            for (index, priority) in [1.0, 0.0, 0.5].enumerated() {
                let task = try await daemon.dataTask(in: sid, ["url": probe.url + "/stream/\(index)"], extra: ["priority": priority])
                ids.append(try #require(task.int("id")))
                let arrived = await probe.wait { streams, _ in streams.count == index + 1 }
                try #require(arrived, "stream \(index) did not arrive: \(probe.streams)")
            }
            #expect(probe.streams.map(\.weight) == [256, 1, 129], "\(probe.streams)")
            // A new priority on a running task goes out as a PRIORITY frame for its stream.
            let first = probe.streams[0]
            let patched = try await daemon.patch("/v1/tasks/\(ids[0])", json: ["priority": 0.25])
            #expect(patched.status == 200, "\(patched)")
            let updated = await probe.wait { _, updates in
                updates.contains { $0.connection == first.connection && $0.streamId == first.streamId }
            }
            #expect(updated, "no PRIORITY frame for \(first): \(probe.priorityUpdates)")
            #expect(probe.priorityUpdates.first { $0.connection == first.connection && $0.streamId == first.streamId }?.weight == 65,
                    "\(probe.priorityUpdates)")
            for id in ids { _ = try await daemon.post("/v1/tasks/\(id)/cancel") }
            for id in ids { _ = try await daemon.waitForCompletion(id) }
        }
    }
}
