import Foundation
import Synchronization
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService
internal import JSONModel

/// Retries on a fake engine: which outcomes a background session tries again, after how long
/// (the hold the service sets, read from its state), and what each attempt starts from. Holds
/// are long (a backoff of tens of seconds), so the hold timer never fires during a test: the
/// test lets a hold fall due by calling the timer's handler with the hold's date.
@Suite struct FakeEngineRetryTests {
    /// Retry n waits [d/2, d], d = 20 · 2ⁿ s, at most 200 s: never due while a test runs.
    static func longRetries(_ configuration: inout ServiceConfiguration) {
        configuration.retryBackoff = Backoff(base: 20, cap: 200)
        configuration.connectivityBackoff = Backoff(base: 20, cap: 40)
    }

    @Test func aBackgroundTaskRetriesTransientStatusesWithGrowingWaitsThenSucceeds() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, Self.longRetries)
        defer { harness.stop() }
        let session = try harness.backgroundSession()
        let created = try harness.task(in: session, "http://origin.invalid/flaky")

        let statuses = [503, 500, 429]
        var waits: [Double] = []
        for (attempt, status) in statuses.enumerated() {
            try await engine.waitForStart(of: created.id, count: attempt + 1)
            let failedAt = Date()
            engine.succeed(created.id, status: status, body: Data("busy".utf8))
            let task = try harness.service.task(created.id, owner: nil)
            #expect(task.state == .running && task.phase == .retrying)
            #expect(task.retryCount == attempt + 1)
            let hold = try #require(harness.hold(of: created.id), "no hold after a \(status)")
            let wait = hold.until.timeIntervalSince(failedAt)
            let ceiling = 20 * pow(2, Double(attempt))
            #expect(wait >= ceiling / 2 - 0.5 && wait <= ceiling + 0.5, "retry \(attempt + 1) waits \(wait) s")
            waits.append(wait)
            #expect(engine.startedIds.count == attempt + 1, "a retry must wait for its hold")
            harness.service.releaseDueHolds(now: hold.until)
        }
        try await engine.waitForStart(of: created.id, count: 4)
        engine.succeed(created.id, body: Data("done".utf8))

        let task = try await harness.completion(created.id)
        #expect(task.error == nil && task.response?.statusCode == 200 && task.retryCount == 3)
        #expect(try harness.service.body(task: created.id, owner: nil).body == Data("done".utf8))
        #expect(waits[2] > waits[0], "the waits did not grow: \(waits)")
        let retries = try await harness.events(session).filter { $0.type == .willRetry }
        #expect(retries.map { $0.fields["attempt"] } == [.integer(2), .integer(3), .integer(4)])
        #expect(retries.map { $0.fields["statusCode"] } == statuses.map { .integer(Int64($0)) })
        for (event, wait) in zip(retries, waits) {
            guard case .number(let delay) = event.fields["delay"] else { Issue.record("no delay in \(event)"); continue }
            #expect(abs(delay - wait) < 0.5, "the event says \(delay) s, the hold is \(wait) s")
        }
    }

    @Test func retryAfterIsHonouredAsSecondsAndAsAnHTTPDateWithinTheCap() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.retryBackoff = Backoff(base: 0.05, cap: 60) }
        defer { harness.stop() }
        let created = try harness.task(in: try harness.backgroundSession(), "http://origin.invalid/busy")

        var failedAt = Date()
        engine.succeed(created.id, status: 503, headers: ["Retry-After": "30"])
        var hold = try #require(harness.hold(of: created.id))
        #expect(abs(hold.until.timeIntervalSince(failedAt) - 30) < 0.5, "Retry-After: 30 held \(hold.until.timeIntervalSince(failedAt)) s")
        harness.service.releaseDueHolds(now: hold.until)

        try await engine.waitForStart(of: created.id, count: 2)
        let target = Date(timeIntervalSince1970: floor(Date().timeIntervalSince1970) + 40)
        failedAt = Date()
        engine.succeed(created.id, status: 429, headers: ["Retry-After": httpDate(target)])
        hold = try #require(harness.hold(of: created.id))
        #expect(abs(hold.until.timeIntervalSince(target)) < 0.5, "Retry-After: \(httpDate(target)) held until \(hold.until)")
        harness.service.releaseDueHolds(now: hold.until)

        // A far-off Retry-After is bounded by the backoff's cap.
        try await engine.waitForStart(of: created.id, count: 3)
        failedAt = Date()
        engine.succeed(created.id, status: 503, headers: ["Retry-After": "86400"])
        hold = try #require(harness.hold(of: created.id))
        #expect(abs(hold.until.timeIntervalSince(failedAt) - 60) < 0.5)
        #expect(try harness.service.task(created.id, owner: nil).retryCount == 3)
    }

    @Test func aDefaultSessionReportsTheSameStatusAtOnce() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, Self.longRetries)
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, "http://origin.invalid/busy")
        engine.succeed(created.id, status: 503, headers: ["Retry-After": "1"], body: Data("busy".utf8))
        let task = try await harness.completion(created.id)
        #expect(task.error == nil && task.response?.statusCode == 503 && task.retryCount == 0)
        #expect(engine.startedIds == [created.id])
        #expect(harness.hold(of: created.id) == nil)
        #expect(try await harness.events(session).allSatisfy { $0.type != .willRetry })
    }

    @Test func aRetryThatWouldStartAfterTheResourceDeadlineIsNotMade() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.retryBackoff = Backoff(base: 0.05, cap: 60) }
        defer { harness.stop() }
        let created = try harness.task(in: try harness.backgroundSession { $0.timeoutIntervalForResource = 5 }, "http://origin.invalid/down")
        engine.succeed(created.id, status: 503, headers: ["Retry-After": "3"])  // 3 s fits in 5
        let hold = try #require(harness.hold(of: created.id))
        harness.service.releaseDueHolds(now: hold.until)
        try await engine.waitForStart(of: created.id, count: 2)
        engine.succeed(created.id, status: 503, headers: ["Retry-After": "6"], body: Data("down".utf8))  // 6 s does not
        let task = try await harness.completion(created.id)
        #expect(task.error == nil && task.response?.statusCode == 503, "the last answer stands: \(String(describing: task.error))")
        #expect(task.retryCount == 1)
        #expect(engine.startedIds.count == 2)
    }

    @Test func anIdleTimeoutAfterTheResponseIsRetriedAndOneBeforeItWaitsForConnectivity() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, Self.longRetries)
        defer { harness.stop() }
        let session = try harness.backgroundSession()
        let created = try harness.task(in: session, "http://origin.invalid/stall", timeoutInterval: 1)
        engine.respond(to: created.id, with: .response(engine.head(of: created.id, headers: ["Content-Length": "100"])),
                       .received(bytes: 7, total: 7, expected: 100, bytesPerSecond: 0))
        engine.fail(created.id, .timedOut)
        #expect(try harness.service.task(created.id, owner: nil).phase == .retrying)
        let retry = try #require(try await harness.events(session).first { $0.type == .willRetry })
        guard case .object(let error) = retry.fields["error"] else { Issue.record("willRetry without its error: \(retry)"); return }
        #expect(error["code"] == .integer(Int64(URLErrorCode.timedOut.rawValue)))
        #expect(retry.fields["statusCode"] == .null)

        harness.service.releaseDueHolds(now: try #require(harness.hold(of: created.id)).until)
        try await engine.waitForStart(of: created.id, count: 2)
        // No answer at all this time: as far as a client can tell, the host is unreachable.
        engine.fail(created.id, .timedOut)
        #expect(try harness.service.task(created.id, owner: nil).phase == .waiting)
        harness.service.releaseDueHolds(now: try #require(harness.hold(of: created.id)).until)
        try await engine.waitForStart(of: created.id, count: 3)
        engine.succeed(created.id, body: Data("whole".utf8))
        let task = try await harness.completion(created.id)
        #expect(task.error == nil && task.retryCount == 1)
        #expect(try harness.service.body(task: created.id, owner: nil).body == Data("whole".utf8))
    }

    @Test func aRetriedDownloadGoesOnFromItsCheckpointAndAFailedOneStartsOver() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, Self.longRetries)
        defer { harness.stop() }
        let created = try harness.service.createTask(in: try harness.backgroundSession(), TaskCreate(kind: .download, request: RequestSpec(url: "http://origin.invalid/file.bin")), owner: nil)
        let head = engine.head(of: created.id, headers: ["Content-Length": "200000", "ETag": "\"v1\""])
        let state = ResumeState(offset: 80_000, etag: "\"v1\"", expectedLength: 200_000)
        engine.respond(to: created.id, with: .response(head), .received(bytes: 80_000, total: 80_000, expected: 200_000, bytesPerSecond: 0),
                       .completed(.interrupted(TaskError(.networkConnectionLost, "lost"), state)))
        #expect(try harness.service.task(created.id, owner: nil).progress.bytesReceived == 80_000)
        harness.service.releaseDueHolds(now: try #require(harness.hold(of: created.id)).until)
        let second = try await engine.waitForStart(of: created.id, count: 2)
        #expect(second.resume?.offset == 80_000 && second.resume?.etag == "\"v1\"")

        // This attempt fails outright (its partial file is gone): the next starts from zero.
        engine.respond(to: created.id, with: .response(head))
        engine.fail(created.id, .networkConnectionLost)
        harness.service.releaseDueHolds(now: try #require(harness.hold(of: created.id)).until)
        let third = try await engine.waitForStart(of: created.id, count: 3)
        #expect(third.resume == nil)
        #expect(try harness.service.task(created.id, owner: nil).retryCount == 2)
    }

    @Test func suspendingARetryingTaskDropsItsHoldAndResumeStartsItAtOnce() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, Self.longRetries)
        defer { harness.stop() }
        let created = try harness.task(in: try harness.backgroundSession(), "http://origin.invalid/later")
        engine.succeed(created.id, status: 503, headers: ["Retry-After": "30"])
        #expect(harness.hold(of: created.id) != nil)

        let suspended = try harness.service.suspend(task: created.id, owner: nil)
        #expect(suspended.state == .suspended && suspended.phase == .queued)
        #expect(harness.hold(of: created.id) == nil)
        #expect(engine.controls(of: created.id).isEmpty, "a held task is not in the engine: nothing to pause")
        _ = try harness.service.resume(task: created.id, owner: nil)
        #expect(engine.startedIds == [created.id, created.id], "resume waited for the old Retry-After")
        engine.succeed(created.id, body: Data("now".utf8))
        #expect(try await harness.completion(created.id).retryCount == 1)
    }

    @Test func cancellingARetryingTaskEndsItAndItsHold() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, Self.longRetries)
        defer { harness.stop() }
        let created = try harness.task(in: try harness.backgroundSession(), "http://origin.invalid/later")
        engine.succeed(created.id, status: 503)
        let cancelled = try harness.service.cancel(task: created.id, owner: nil)
        #expect(cancelled.state == .completed && cancelled.error?.code == URLErrorCode.cancelled.rawValue)
        #expect(harness.hold(of: created.id) == nil)
        #expect(engine.controls(of: created.id).isEmpty)
        #expect(engine.startedIds == [created.id])
    }

    @Test func aTaskHeldWhenTheDaemonStopsIsTriedAgainWhenItStarts() async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-fake-restart")
        defer { folder.remove() }
        var configuration = ServiceConfiguration(dataDirectory: folder.path)
        Self.longRetries(&configuration)
        let engine = FakeEngine()
        let first = try TransferService(configuration: configuration, engine: engine)
        first.start()
        let session = try first.createSession(SessionCreate(kind: .background, identifier: "restart"), owner: nil).session.id
        let created = try first.createTask(in: session, TaskCreate(kind: .data, request: RequestSpec(url: "http://origin.invalid/later")), owner: nil)
        engine.succeed(created.id, status: 503, headers: ["Retry-After": "60"])
        #expect(try first.task(created.id, owner: nil).phase == .retrying)
        first.stop()

        let again = FakeEngine()
        let second = try TransferService(configuration: configuration, engine: again)
        second.start()
        defer { second.stop() }
        #expect(again.startedIds == [created.id], "a held task starts again at once, not at its old date")
        again.succeed(created.id, body: Data("back".utf8))
        let task = try await second.completion(created.id)
        #expect(task.error == nil && task.retryCount == 1)
    }
}

extension ServiceHarness {
    /// Task `id`'s hold, if it is held (for a retry, connectivity or its begin date).
    func hold(of id: Int) -> Holds.Hold? {
        service.state.withLock { $0.holds.hold(of: id) }
    }
}
