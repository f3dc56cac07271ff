import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// earliestBeginDate: a task waits (phase `waiting`, nothing sent) until its date, then reports
/// willBeginDelayedRequest and runs; a suspend and resume, or a restart, keep it waiting.
@Suite struct DelayedTaskTests {
    /// When the origin saw `instant`, on the wall clock.
    private static func wall(_ instant: ContinuousClock.Instant) -> Date {
        let elapsed = ContinuousClock.now - instant
        return Date().addingTimeInterval(-(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
    }

    /// Whole seconds: the API's timestamps have no fraction.
    private static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.up)))
    }

    @Test func aTaskWaitsForItsEarliestBeginDateThenRuns() async throws {
        let origin = try OriginServer { _ in .text("on time") }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let begin = Date().addingTimeInterval(2)
            let text = Self.timestamp(begin)
            let created = try await daemon.dataTask(["url": origin.url("/later")], extra: ["earliestBeginDate": text])
            let id = try #require(created.int("id"))
            #expect(created.string("phase") == "waiting")
            #expect(created.string("earliestBeginDate") == text)
            #expect(try await daemon.get("/v1/stats").object().int("waiting") == 1)
            #expect(try await daemon.get("/v1/queue").object().int("total") == 0)

            let done = try await daemon.waitForCompletion(id, timeout: 10)
            #expect(done.isNull("error"))
            let started = try #require(parseTimestamp(done["startedAt"]))
            #expect(started >= Date(timeIntervalSince1970: begin.timeIntervalSince1970.rounded(.up)))
            let arrived = Self.wall(try #require(origin.requests.first?.receivedAt))
            #expect(arrived.timeIntervalSince1970 >= begin.timeIntervalSince1970.rounded(.up) - 0.05)
            let types = try await daemon.allEvents("shared").filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
            #expect(types.first == "willBeginDelayedRequest", "\(types)")
            #expect(types.last == "didCompleteWithError")
        }
    }

    @Test func suspendAndResumeKeepTheDelay() async throws {
        let origin = try OriginServer { _ in .text("on time") }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let begin = Date().addingTimeInterval(2)
            let id = try #require(try await daemon.dataTask(["url": origin.url("/later")], extra: ["earliestBeginDate": Self.timestamp(begin)]).int("id"))
            #expect(try await daemon.post("/v1/tasks/\(id)/suspend").status == 200)
            let resumed = try await daemon.post("/v1/tasks/\(id)/resume").object()
            #expect(resumed.string("phase") == "waiting")
            #expect(origin.requests.isEmpty)
            #expect(try await daemon.waitForCompletion(id, timeout: 10).isNull("error"))
            #expect(origin.requests.count == 1)
        }
    }

    @Test func aRestartKeepsTheDelay() async throws {
        let origin = try OriginServer { _ in .text("on time") }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let begin = Date().addingTimeInterval(3)
            let id = try #require(try await daemon.dataTask(["url": origin.url("/later")], extra: ["earliestBeginDate": Self.timestamp(begin)]).int("id"))
            daemon.stop()
            let again = try daemon.restarted()
            defer { again.stop() }
            #expect(try await again.task(id).string("phase") == "waiting")
            #expect(origin.requests.isEmpty)
            #expect(try await again.waitForCompletion(id, timeout: 10).isNull("error"))
            let arrived = Self.wall(try #require(origin.requests.first?.receivedAt))
            #expect(arrived.timeIntervalSince1970 >= begin.timeIntervalSince1970.rounded(.up) - 0.05)
        }
    }

    @Test func aBadDateIsRefused() async throws {
        try await DaemonFixture.with { daemon in
            let bad = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": "http://127.0.0.1:9/"], "earliestBeginDate": "tomorrow"])
            #expect(bad.status == 422 && bad.error?.string("field") == "earliestBeginDate", "\(bad)")
            #expect(try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": "http://127.0.0.1:9/"], "earliestBeginDate": 5]).errorCode == "invalid_type")
            let far = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": "http://127.0.0.1:9/"], "earliestBeginDate": "2099-01-01T00:00:00Z"])
            #expect(far.status == 422 && far.error?.string("field") == "earliestBeginDate", "\(far)")
            #expect((try await daemon.get("/v1/sessions/shared/tasks").object()["items"] as? [Any])?.isEmpty == true)
        }
    }
}
