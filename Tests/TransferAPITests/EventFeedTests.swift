import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// The session event feed: order per task, the `next` cursor, and long-polls on it.
@Suite struct EventFeedTests {
    static let eventKeys: Set<String> = ["seq", "taskId", "type", "time"]

    @Test func eventsOfEachTaskArriveInCallbackOrder() async throws {
        let chunks = (0..<5).map { index in Data(repeating: UInt8(65 + index), count: 1000) }
        let upload = Data(count: 100_000) { UInt8(truncatingIfNeeded: $0) }
        let origin = try OriginServer { request in
            request.method == "POST"
                ? .text("got \(request.body.count)")
                : .chunked(headers: ["Content-Type": "text/plain"], chunks: chunks, interval: .milliseconds(40))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let download = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/chunks")]).int("id"))
            let post = try #require(try await daemon.dataTask(in: sid, [
                "url": origin.url("/upload"), "method": "POST", "body": ["base64": upload.base64EncodedString()],
            ]).int("id"))
            _ = try await daemon.waitForCompletion(download)
            _ = try await daemon.waitForCompletion(post)
            #expect(try await daemon.body(download).body == chunks.reduce(Data(), +))

            let events = try await daemon.allEvents(sid)
            let seqs = events.compactMap { $0.int("seq") }
            #expect(seqs.count == events.count)
            #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "seq must increase: \(seqs)")
            for event in events {
                #expect(Self.eventKeys.isSubset(of: Set(event.keys)), "\(event)")
                #expect(parseTimestamp(event["time"]) != nil)
            }

            // The download: response, then data, then completion, and nothing after it.
            let mine = events.filter { $0.int("taskId") == download }
            let types = mine.compactMap { $0.string("type") }
            #expect(types.first == "didReceiveResponse")
            #expect(types.last == "didCompleteWithError")
            // A 200 is storable, so the URL cache announces it before the metrics and the completion.
            #expect(types.dropLast().last == "didFinishCollectingMetrics", "\(types)")
            #expect(types.dropLast(2).last == "willCacheResponse", "\(types)")
            #expect(types.dropFirst().dropLast(3).allSatisfy { $0 == "didReceiveData" } && types.count >= 5, "\(types)")
            #expect(mine.first?.value(at: "response.statusCode") as? Int == 200)
            #expect(mine.first?.value(at: "response.mimeType") as? String == "text/plain")
            #expect(mine.last?.isNull("error") == true)
            let data = mine.filter { $0.string("type") == "didReceiveData" }
            #expect(data.compactMap { $0.int("bytesReceived") }.reduce(0, +) == 5000)
            let totals = data.compactMap { $0.int("totalBytesReceived") }
            #expect(totals == totals.sorted() && totals.last == 5000)
            #expect(data.allSatisfy { $0.isNull("totalBytesExpectedToReceive") }, "chunked: the length is unknown")

            // The upload: body sent before the response, totals add up.
            let sent = events.filter { $0.int("taskId") == post }
            let sentTypes = sent.compactMap { $0.string("type") }
            #expect(Array(sentTypes.suffix(2)) == ["didFinishCollectingMetrics", "didCompleteWithError"], "\(sentTypes)")
            let firstSend = try #require(sentTypes.firstIndex(of: "didSendBodyData"), "\(sentTypes)")
            let response = try #require(sentTypes.firstIndex(of: "didReceiveResponse"))
            #expect(firstSend < response)
            let sendEvents = sent.filter { $0.string("type") == "didSendBodyData" }
            #expect(sendEvents.compactMap { $0.int("bytesSent") }.reduce(0, +) == upload.count)
            #expect(sendEvents.last?.int("totalBytesSent") == upload.count)
            #expect(sendEvents.allSatisfy { $0.int("totalBytesExpectedToSend") == upload.count })
            #expect(origin.requests.first { $0.method == "POST" }?.body == upload)
        }
    }

    @Test func nextCursorWalksTheFeed() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            // Tasks with an unsupported scheme complete at once: two events each (metrics, completion).
            var ids: [Int] = []
            for index in 0..<4 {
                ids.append(try #require(try await daemon.dataTask(in: sid, ["url": "gopher://127.0.0.1/\(index)"]).int("id")))
            }
            let whole = try await daemon.events(sid)
            #expect(whole.events.count == 8)
            #expect(whole.events.compactMap { $0.int("taskId") } == ids.flatMap { [$0, $0] })
            #expect(whole.events.compactMap { $0.string("type") } == Array(repeating: ["didFinishCollectingMetrics", "didCompleteWithError"], count: 4).flatMap { $0 })
            #expect(whole.next == whole.events.last?.int("seq"))

            // limit=1: one event per page; each page's next is its event's seq.
            var walked: [[String: Any]] = []
            var after = 0
            for _ in 0..<12 {
                let page = try await daemon.events(sid, after: after, limit: 1)
                if page.events.isEmpty {
                    #expect(page.next == after)
                    break
                }
                #expect(page.events.count == 1)
                #expect(page.next == page.events.first?.int("seq"))
                walked += page.events
                after = page.next
            }
            #expect(walked.count == 8)
            #expect(zip(walked, whole.events).allSatisfy { jsonEqual($0, $1) })

            // A cursor in the middle (the second task's completion) answers the rest.
            let second = try #require(whole.events[3].int("seq"))
            let rest = try await daemon.events(sid, after: second)
            #expect(rest.events.compactMap { $0.int("taskId") } == ids.suffix(2).flatMap { [$0, $0] })

            // Past the end: nothing, and next stays where it was.
            let end = try await daemon.events(sid, after: whole.next + 1000)
            #expect(end.events.isEmpty)
            #expect(end.next == whole.next + 1000)
        }
    }

    @Test func feedsAreSeparatePerSession() async throws {
        try await DaemonFixture.with { daemon in
            let a = try #require(try await daemon.createSession().string("id"))
            let b = try #require(try await daemon.createSession().string("id"))
            let taskA = try #require(try await daemon.dataTask(in: a, ["url": "gopher://127.0.0.1/a"]).int("id"))
            let taskB = try #require(try await daemon.dataTask(in: b, ["url": "gopher://127.0.0.1/b"]).int("id"))
            // Each feed holds its own task's metrics and completion, nothing of the other's.
            #expect(try await daemon.allEvents(a).compactMap { $0.int("taskId") } == [taskA, taskA])
            #expect(try await daemon.allEvents(b).compactMap { $0.int("taskId") } == [taskB, taskB])
        }
    }

    @Test func heldEventPollIsAnsweredWhenAnEventArrives() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            _ = try await daemon.dataTask(in: sid, ["url": "gopher://127.0.0.1/first"])
            let cursor = try await daemon.events(sid).next
            #expect(cursor > 0)

            let pollClient = daemon.newClient()
            let start = ContinuousClock.now
            async let held = daemon.events(sid, after: cursor, wait: 10, client: pollClient)
            try await waitUntilHeld(daemon, count: 1)
            let task = try #require(try await daemon.dataTask(in: sid, ["url": "gopher://127.0.0.1/second"]).int("id"))
            let page = try await held
            let elapsed = seconds(since: start)
            #expect(elapsed < 5, "held for \(elapsed) s")
            // The metrics and the completion are recorded together, so one answer carries both.
            #expect(page.events.compactMap { $0.string("type") } == ["didFinishCollectingMetrics", "didCompleteWithError"])
            #expect(page.events.allSatisfy { $0.int("taskId") == task })
            #expect(page.next == page.events.last?.int("seq"))
            #expect(page.next > cursor)
        }
    }

    @Test func eventPollTimesOutWithTheSameCursor() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let start = ContinuousClock.now
            let page = try await daemon.events(sid, after: 0, wait: 1)
            let elapsed = seconds(since: start)
            #expect(page.events.isEmpty)
            #expect(page.next == 0)
            #expect(elapsed >= 1.0 && elapsed < 4, "answered after \(elapsed) s")
            #expect(daemon.daemon.service.heldLongPolls == 0)
        }
    }
}

/// Waits until the daemon holds `count` long-polls. The daemon has no event for "a poll is now
/// held", so this checks its counter every few milliseconds, for at most 10 s.
func waitUntilHeld(_ daemon: DaemonFixture, count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while daemon.daemon.service.heldLongPolls < count {
        try #require(ContinuousClock.now < deadline, "the daemon holds \(daemon.daemon.service.heldLongPolls) long-polls, not \(count)", sourceLocation: sourceLocation)
        try await Task.sleep(for: .milliseconds(5))
    }
}
