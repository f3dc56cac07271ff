import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// waitsForConnectivity on a fake engine: a task whose host cannot be reached waits (phase
/// `waiting`, one taskIsWaitingForConnectivity event) and tries again until it connects or the
/// resource timeout passes; other sessions fail at once.
@Suite struct FakeEngineConnectivityTests {
    @Test func aTaskWaitsThroughSeveralTriesThenCompletes() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, FakeEngineRetryTests.longRetries)
        defer { harness.stop() }
        let session = try harness.session { $0.waitsForConnectivity = true }
        let created = try harness.task(in: session, "http://origin.invalid/later")
        for attempt in 1...3 {
            try await engine.waitForStart(of: created.id, count: attempt)
            engine.fail(created.id, .cannotConnectToHost)
            let task = try harness.service.task(created.id, owner: nil)
            #expect(task.state == .running && task.phase == .waiting)
            harness.service.releaseDueHolds(now: try #require(harness.hold(of: created.id)).until)
        }
        try await engine.waitForStart(of: created.id, count: 4)
        engine.succeed(created.id, body: Data("up".utf8))
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(task.retryCount == 0)  // tries while waiting are not retries
        let types = try await harness.events(session).map(\.type)
        #expect(types.filter { $0 == .taskIsWaitingForConnectivity }.count == 1, "\(types)")
        #expect(types.first == .taskIsWaitingForConnectivity)
        #expect(!types.contains(.willRetry))
    }

    @Test func withoutWaitsForConnectivityADefaultSessionFailsAtOnce() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, FakeEngineRetryTests.longRetries)
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, "http://origin.invalid/never")
        engine.fail(created.id, .cannotConnectToHost)
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.cannotConnectToHost.rawValue)
        #expect(try await harness.events(session).map(\.type) == [.didFinishCollectingMetrics, .didCompleteWithError])
    }

    @Test func aBackgroundSessionWaitsEvenWithoutTheSetting() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, FakeEngineRetryTests.longRetries)
        defer { harness.stop() }
        let created = try harness.task(in: try harness.backgroundSession(), "http://origin.invalid/later")
        engine.fail(created.id, .cannotConnectToHost)
        #expect(try harness.service.task(created.id, owner: nil).phase == .waiting)
        #expect(harness.hold(of: created.id) != nil)
    }

    /// The real hold timer here (short waits): tries go on until the next would start after the
    /// resource deadline, then the task fails with timedOut.
    @Test func waitingEndsWithTimedOutWhenTheResourceTimeoutPasses() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.connectivityBackoff = Backoff(base: 0.1, cap: 0.1) }
        defer { harness.stop() }
        let session = try harness.session {
            $0.waitsForConnectivity = true
            $0.timeoutIntervalForResource = 0.5
        }
        let start = ContinuousClock.now
        let created = try harness.task(in: session, "http://origin.invalid/never")
        var tries = 0
        while try harness.service.task(created.id, owner: nil).state == .running {
            tries += 1
            try await engine.waitForStart(of: created.id, count: tries, timeout: 5)
            engine.fail(created.id, .cannotConnectToHost)
        }
        let task = try await harness.completion(created.id)
        let elapsed = seconds(since: start)
        #expect(task.error?.code == URLErrorCode.timedOut.rawValue)
        #expect(task.error?.message.contains("timeoutIntervalForResource") == true)
        #expect(tries >= 3, "tried \(tries) times in 0.5 s with 0.05 to 0.1 s waits")
        #expect(elapsed >= 0.35 && elapsed < 3, "gave up after \(elapsed) s")
        let types = try await harness.events(session).map(\.type)
        #expect(types == [.taskIsWaitingForConnectivity, .didFinishCollectingMetrics, .didCompleteWithError])
    }

    @Test func aDownloadWaitingForItsHostKeepsItsCheckpoint() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine, FakeEngineRetryTests.longRetries)
        defer { harness.stop() }
        let created = try harness.service.createTask(in: try harness.backgroundSession(), TaskCreate(kind: .download, request: RequestSpec(url: "http://origin.invalid/file.bin")), owner: nil)
        let state = ResumeState(offset: 80_000, etag: "\"v1\"", expectedLength: 200_000)
        engine.respond(to: created.id, with: .response(engine.head(of: created.id, headers: ["ETag": "\"v1\""])),
                       .completed(.interrupted(TaskError(.networkConnectionLost, "lost"), state)))
        harness.service.releaseDueHolds(now: try #require(harness.hold(of: created.id)).until)
        try await engine.waitForStart(of: created.id, count: 2)
        // The host is gone: the engine keeps the partial file and says where it stands.
        engine.respond(to: created.id, with: .completed(.interrupted(TaskError(.cannotConnectToHost, "refused"), state)))
        #expect(try harness.service.task(created.id, owner: nil).phase == .waiting)
        harness.service.releaseDueHolds(now: try #require(harness.hold(of: created.id)).until)
        let third = try await engine.waitForStart(of: created.id, count: 3)
        #expect(third.resume?.offset == 80_000)
    }
}
