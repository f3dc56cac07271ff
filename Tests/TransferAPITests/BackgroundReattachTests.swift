import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Background sessions as URLSession's: acknowledging the feed, the replay and didFinishEvents
/// after a reattach, and at most one live attachment (backgroundSessionInUseByAnotherProcess).
@Suite struct BackgroundReattachTests {
    /// Tasks with an unsupported scheme complete at once with two events each
    /// (didFinishCollectingMetrics, didCompleteWithError): a cheap feed.
    private func quickTasks(_ daemon: DaemonFixture, in session: String, count: Int) async throws -> [Int] {
        var ids: [Int] = []
        for index in 0..<count {
            ids.append(try #require(try await daemon.dataTask(in: session, ["url": "gopher://127.0.0.1/\(index)"]).int("id")))
        }
        return ids
    }

    private func reattach(_ daemon: DaemonFixture, _ identifier: String) async throws -> APIResponse {
        try await daemon.post("/v1/sessions", json: ["kind": "background", "identifier": identifier])
    }

    @Test func aReattachReplaysTheUnacknowledgedEventsThenDidFinishEvents() async throws {
        try await DaemonFixture.with { daemon in
            let created = try await reattach(daemon, "com.example.replay")
            #expect(created.status == 201)
            let sid = try #require(try created.object().string("id"))
            _ = try await quickTasks(daemon, in: sid, count: 5)
            let all = try await daemon.allEvents(sid)
            try #require(all.count == 10, "five tasks, metrics and completion each: \(all)")
            let third = try #require(all[5].int("seq"))

            // Acknowledge the first three tasks' six events: they are gone from the feed; the
            // session says so.
            let ack = try await daemon.post("/v1/sessions/\(sid)/events/ack", json: ["through": third])
            #expect(ack.status == 200, "\(ack)")
            #expect(try ack.object().int("acknowledgedEventSeq") == third)
            let rest = try await daemon.allEvents(sid)
            #expect(rest.compactMap { $0.int("seq") } == all.suffix(4).compactMap { $0.int("seq") })
            // Acknowledging less again changes nothing.
            #expect(try await daemon.post("/v1/sessions/\(sid)/events/ack", json: ["through": 1]).object().int("acknowledgedEventSeq") == third)

            // Reattach: 200, the same session; from the acknowledged cursor the feed replays the
            // four unacknowledged events (two tasks) in order, then didFinishEvents, exactly once.
            let again = try await reattach(daemon, "com.example.replay")
            #expect(again.status == 200)
            #expect(try again.object().string("id") == sid)
            let replay = try await daemon.events(sid, after: third).events
            #expect(replay.count == 5, "\(replay)")
            #expect(zip(replay.prefix(4), all.suffix(4)).allSatisfy { jsonEqual($0, $1) })
            let finish = try #require(replay.last)
            #expect(finish.string("type") == "didFinishEvents")
            #expect(finish.isNull("taskId"))
            #expect(finish.int("backlog") == 4)
            #expect(finish.int("backlogThrough") == all.last?.int("seq"))
            #expect(finish.int("acknowledgedThrough") == third)

            // Everything acknowledged: the next reattach's didFinishEvents comes at once, alone.
            let finishSeq = try #require(finish.int("seq"))
            #expect(try await daemon.post("/v1/sessions/\(sid)/events/ack", json: ["through": finishSeq]).status == 200)
            #expect(try await reattach(daemon, "com.example.replay").status == 200)
            let next = try await daemon.events(sid, after: finishSeq).events
            #expect(next.count == 1)
            #expect(next.first?.string("type") == "didFinishEvents")
            #expect(next.first?.int("backlog") == 0)
        }
    }

    @Test func acknowledgementsAreCheckedAndSurviveARestart() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await reattach(daemon, "com.example.ack").object().string("id"))
            _ = try await quickTasks(daemon, in: sid, count: 3)
            let events = try await daemon.allEvents(sid)
            let last = try #require(events.last?.int("seq"))

            let beyond = try await daemon.post("/v1/sessions/\(sid)/events/ack", json: ["through": last + 1])
            #expect(beyond.status == 422)
            #expect(beyond.errorCode == "invalid_value")
            #expect(beyond.error?.string("field") == "through")
            #expect(try await daemon.post("/v1/sessions/\(sid)/events/ack", json: [:]).errorCode == "missing_field")
            #expect(try await daemon.post("/v1/sessions/\(sid)/events/ack", json: ["through": -1]).status == 422)
            #expect(try await daemon.post("/v1/sessions/\(sid)/events/ack", json: ["through": "3"]).errorCode == "invalid_type")
            #expect(try await daemon.post("/v1/sessions/\(sid)/events/ack", json: ["through": 1, "all": true]).errorCode == "unknown_field")
            #expect(try await daemon.post("/v1/sessions/nope/events/ack", json: ["through": 1]).status == 404)
            #expect(try await daemon.post("/v1/sessions/shared/events/ack", json: ["through": 1]).errorCode == "shared_session")
            // Nothing was acknowledged by the refused calls.
            try #require(events.count == 6, "three tasks, metrics and completion each: \(events)")
            #expect(try await daemon.allEvents(sid).count == 6)

            // Acknowledge the first task's events and the second's first: through the middle of
            // what one store row may hold (a commit's events of a session share a row,
            // `EventRows`); the three after it remain, the acknowledged ones never come back.
            let middle = try #require(events[2].int("seq"))
            #expect(try await daemon.post("/v1/sessions/\(sid)/events/ack", json: ["through": middle]).status == 200)
            daemon.stop()
            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await second.session(sid).int("acknowledgedEventSeq") == middle)
            let after = try await second.allEvents(sid)
            #expect(after.compactMap { $0.int("seq") } == events.suffix(3).compactMap { $0.int("seq") }, "acknowledged events came back: \(after)")
            #expect(after.last?.int("seq") == last)
        }
    }

    @Test func oneLiveAttachmentAtATime() async throws {
        try await DaemonFixture.with(configure: { $0.service.attachmentLease = 1.5 }) { daemon in
            let first = try await reattach(daemon, "com.example.attach")
            #expect(first.status == 201)
            let sid = try #require(try first.object().string("id"))
            let attachment = try #require(first.header("Transferd-Attachment"))

            // Not claimed yet: clients that never poll with an attachment are never locked out.
            let unclaimed = try await reattach(daemon, "com.example.attach")
            #expect(unclaimed.status == 200)
            let current = try #require(unclaimed.header("Transferd-Attachment"))
            #expect(current != attachment)
            // The superseded attachment is refused; the current one is claimed by polling with it.
            let stale = try await daemon.get("/v1/sessions/\(sid)/events?attachment=\(attachment)")
            #expect(stale.status == 409)
            #expect(stale.errorCode == "not_attached")
            #expect(try await daemon.get("/v1/sessions/\(sid)/events?attachment=\(current)").status == 200)

            // A second client now: 409 as URLSession's -996.
            let refused = try await reattach(daemon, "com.example.attach")
            #expect(refused.status == 409)
            #expect(refused.errorCode == "background_session_in_use")
            #expect(refused.error?.int("urlErrorCode") == -996)
            #expect(refused.header("Transferd-Attachment") == nil)

            // Detach lets the next client in at once.
            #expect(try await daemon.request("DELETE", "/v1/sessions/\(sid)/attachment?attachment=\(attachment)").errorCode == "not_attached")
            #expect(try await daemon.request("DELETE", "/v1/sessions/\(sid)/attachment").errorCode == "missing_field")
            #expect(try await daemon.request("DELETE", "/v1/sessions/\(sid)/attachment?attachment=\(current)").status == 204)
            let next = try await reattach(daemon, "com.example.attach")
            #expect(next.status == 200)
            let third = try #require(next.header("Transferd-Attachment"))

            // A claimed attachment that stops polling lapses after the lease.
            #expect(try await daemon.get("/v1/sessions/\(sid)/events?attachment=\(third)").status == 200)
            #expect(try await reattach(daemon, "com.example.attach").status == 409)
            try await Task.sleep(for: .milliseconds(2_000))
            let afterLapse = try await reattach(daemon, "com.example.attach")
            #expect(afterLapse.status == 200, "\(afterLapse)")
            let fourth = try #require(afterLapse.header("Transferd-Attachment"))
            #expect(try await daemon.get("/v1/sessions/\(sid)/events?attachment=\(third)").errorCode == "not_attached")

            // Attachments belong to background sessions only.
            let plain = try #require(try await daemon.createSession().string("id"))
            #expect(try await daemon.get("/v1/sessions/\(plain)/events?attachment=x").errorCode == "not_background")

            // After a restart nothing is attached: the old attachment is refused, a POST attaches.
            #expect(try await daemon.get("/v1/sessions/\(sid)/events?attachment=\(fourth)").status == 200)
            daemon.stop()
            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await second.get("/v1/sessions/\(sid)/events?attachment=\(fourth)").errorCode == "not_attached")
            let reattached = try await reattach(second, "com.example.attach")
            #expect(reattached.status == 200)
            #expect(try reattached.object().string("id") == sid)
        }
    }

    @Test func identifiersAreUniqueUntilTheSessionIsInvalidated() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await reattach(daemon, "com.example.unique").object().string("id"))
            #expect(try await daemon.post("/v1/sessions/\(sid)/invalidate").status == 200)
            #expect(try await daemon.session(sid).string("state") == "invalidated")
            // The identifier is free again: a new session takes it.
            let fresh = try await reattach(daemon, "com.example.unique")
            #expect(fresh.status == 201)
            #expect(try fresh.object().string("id") != sid)
            // Only background sessions have identifiers.
            let refused = try await daemon.post("/v1/sessions", json: ["kind": "default", "identifier": "com.example.unique"])
            #expect(refused.status == 422)
            #expect(refused.error?.string("field") == "identifier")
        }
    }
}
