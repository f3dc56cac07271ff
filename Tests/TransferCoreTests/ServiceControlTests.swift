import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Suspend, resume and cancel of running transfers, and what survives a restart of the service.
@Suite struct ServiceControlTests {
    /// The body in 1 KiB writes every 50 ms (20 KiB/s), slow enough to act on mid-transfer even
    /// when the machine is busy: the whole body would fit in the socket buffers, so only the
    /// origin's pace keeps it from arriving at once.
    static func slowOrigin(_ body: Data) throws -> OriginServer {
        try OriginServer { _ in .slowBody(body: body, bytesPerWrite: 1_024, interval: .milliseconds(50)) }
    }

    @Test func suspendThenResumeDeliversTheExactBodyOnTheSameConnection() async throws {
        let body = randomBytes(48 * 1_024)  // about 2.4 s
        let origin = try Self.slowOrigin(body)
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/slow"))
        try await harness.waitFor(created.id, "first bytes") { $0.progress.bytesReceived > 0 }

        let suspended = try harness.service.suspend(task: created.id, owner: nil)
        #expect(suspended.state == .suspended)
        // Let a report already under way arrive, then nothing may move while suspended.
        let settled = try await harness.progress(created.id, after: suspended.version, wait: 0.3)
        let quiet = try await harness.progress(created.id, after: settled.version, wait: 0.8)
        #expect(quiet.version == settled.version, "the task changed while suspended: \(quiet)")
        #expect(quiet.progress.bytesReceived == settled.progress.bytesReceived)
        #expect(quiet.progress.bytesReceived < body.count)
        #expect(quiet.state == .suspended)

        let resumed = try harness.service.resume(task: created.id, owner: nil)
        #expect(resumed.state == .running)
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(try harness.service.body(task: created.id, owner: nil).body == body)
        // Suspending paused the transfer; it did not start it again.
        #expect(origin.requests.count == 1)
        #expect(origin.connectionCount == 1)
    }

    @Test func suspendedLongerThanTheTimeoutFailsWithTimedOut() async throws {
        let body = randomBytes(200 * 1_024)  // about 10 s: it must time out long before its end
        let origin = try Self.slowOrigin(body)
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/slow"), timeoutInterval: 1)
        try await harness.waitFor(created.id, "first bytes") { $0.progress.bytesReceived > 0 }
        _ = try harness.service.suspend(task: created.id, owner: nil)
        let suspendedAt = ContinuousClock.now
        let task = try await harness.completion(created.id, timeout: 10)
        let elapsed = seconds(since: suspendedAt)
        #expect(task.error?.code == URLErrorCode.timedOut.rawValue)
        #expect(task.state == .completed)
        #expect(elapsed >= 0.9, "failed \(elapsed) s after suspend, before its 1 s timeout")
        #expect(elapsed < 5, "failed \(elapsed) s after suspend")
        #expect(throws: ServiceError.self) { try harness.service.body(task: created.id, owner: nil) }
    }

    @Test func cancelARunningTransferIsCancelled() async throws {
        let origin = try OriginServer { _ in .stallAfterHeaders(contentLength: 1_000_000, bodyPrefix: randomBytes(100)) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, origin.url("/stall"))
        try await harness.waitFor(created.id, "response") { $0.phase == .transferring }

        let cancelling = try harness.service.cancel(task: created.id, owner: nil)
        #expect(cancelling.state == .canceling || cancelling.state == .completed)
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.cancelled.rawValue)
        #expect(task.error?.name == "cancelled")
        #expect(task.phase == .done)
        // The connection is given up.
        #expect(await origin.waitForOpenConnections(0, timeout: .seconds(5)))
        // A completed task cannot be cancelled again.
        let again = #expect(throws: ServiceError.self) { try harness.service.cancel(task: created.id, owner: nil) }
        if case .conflict(let code, _)? = again { #expect(code == "task_completed") } else { Issue.record("expected conflict, got \(String(describing: again))") }
        let events = try await harness.events(session).filter { $0.taskId == created.id }
        #expect(events.filter { $0.type == .didCompleteWithError }.count == 1)
        // A cancelled task reports its metrics too, once, right before its completion.
        #expect(events.filter { $0.type == .didFinishCollectingMetrics }.count == 1)
        #expect(Array(events.suffix(2).map(\.type)) == [.didFinishCollectingMetrics, .didCompleteWithError], "\(events.map(\.type))")
    }

    @Test func cancelATransferPausedMidway() async throws {
        let origin = try Self.slowOrigin(randomBytes(200 * 1_024))
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/slow"))
        try await harness.waitFor(created.id, "first bytes") { $0.progress.bytesReceived > 0 }
        _ = try harness.service.suspend(task: created.id, owner: nil)
        _ = try harness.service.cancel(task: created.id, owner: nil)
        let task = try await harness.completion(created.id, timeout: 5)
        #expect(task.error?.code == URLErrorCode.cancelled.rawValue)
        #expect(await origin.waitForOpenConnections(0, timeout: .seconds(5)))
    }

    @Test func cancelASuspendedTaskThatNeverRan() async throws {
        let origin = try OriginServer { _ in .text("never") }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/x"), state: .suspended)
        #expect(created.state == .suspended)
        let task = try harness.service.cancel(task: created.id, owner: nil)
        #expect(task.state == .completed)
        #expect(task.error?.code == URLErrorCode.cancelled.rawValue)
        #expect(origin.requests.isEmpty)
    }

    @Test func aTaskCreatedSuspendedRunsOnlyWhenResumed() async throws {
        let body = randomBytes(10_000)
        let origin = try OriginServer { _ in .respond(body: body) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/x"), state: .suspended)
        let idle = try await harness.progress(created.id, after: created.version, wait: 0.5)
        #expect(idle.state == .suspended)
        #expect(idle.version == created.version)
        #expect(origin.requests.isEmpty)
        _ = try harness.service.resume(task: created.id, owner: nil)
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(try harness.service.body(task: created.id, owner: nil).body == body)
    }

    @Test func aLongPollIsAnsweredAtItsDeadlineWithTheUnchangedState() async throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), "http://127.0.0.1:9/", state: .suspended)
        let start = ContinuousClock.now
        let snapshot = try await harness.progress(created.id, after: created.version, wait: 0.4)
        let elapsed = seconds(since: start)
        #expect(snapshot.version == created.version)
        #expect(elapsed >= 0.35 && elapsed < 3, "answered after \(elapsed) s")
        // A cursor behind the version is answered at once.
        let immediate = ContinuousClock.now
        _ = try await harness.progress(created.id, after: created.version - 1, wait: 30)
        #expect(seconds(since: immediate) < 1)
        #expect(throws: ServiceError.notFound("no task 999")) { try harness.service.progress(task: 999, after: 0, wait: 0, owner: nil) { _ in } }
    }

    @Test func stopAnswersHeldLongPolls() async throws {
        let harness = try ServiceHarness()
        let created = try harness.task(in: try harness.session(), "http://127.0.0.1:9/", state: .suspended)
        // The waiter is registered before `progress` returns, so there is nothing to wait for.
        let (answers, continuation) = AsyncStream<ProgressSnapshot>.makeStream()
        try harness.service.progress(task: created.id, after: created.version, wait: 30, owner: nil) { snapshot in
            continuation.yield(snapshot)
            continuation.finish()
        }
        #expect(harness.service.heldLongPolls == 1)
        let start = ContinuousClock.now
        harness.stop()
        var received: [ProgressSnapshot] = []
        for await snapshot in answers { received.append(snapshot) }
        #expect(received.map(\.taskId) == [created.id])
        #expect(seconds(since: start) < 5)
        #expect(harness.service.heldLongPolls == 0)
    }

    @Test func restartKeepsCompletedAndSuspendedAndFailsWhatWasRunning() async throws {
        let body = randomBytes(20_000)
        let slowBody = randomBytes(40 * 1_024)
        let origin = try OriginServer { request in
            switch request.path {
            case "/stall": return .stallAfterHeaders(contentLength: 1_000, bodyPrefix: randomBytes(10))
            case "/slow": return .slowBody(body: slowBody, bytesPerWrite: 1_024, interval: .milliseconds(50))
            default: return .respond(body: body)
            }
        }
        defer { origin.stop() }
        let folder = try TempDirectory(prefix: "transferd-coretests-restart")
        defer { folder.remove() }

        let first = try TransferService(configuration: ServiceConfiguration(dataDirectory: folder.path))
        first.start()
        let session = try first.createSession(SessionCreate(), owner: nil).session.id
        let done = try first.createTask(in: session, TaskCreate(request: RequestSpec(url: origin.url("/ok"))), owner: nil)
        let stalled = try first.createTask(in: session, TaskCreate(request: RequestSpec(url: origin.url("/stall"))), owner: nil)
        let paused = try first.createTask(in: session, TaskCreate(request: RequestSpec(url: origin.url("/later")), state: .suspended), owner: nil)
        let midway = try first.createTask(in: session, TaskCreate(request: RequestSpec(url: origin.url("/slow"))), owner: nil)
        _ = try await first.completion(done.id)
        try await first.waitFor(stalled.id) { $0.phase == .transferring }
        try await first.waitFor(midway.id) { $0.progress.bytesReceived > 0 }
        _ = try first.suspend(task: midway.id, owner: nil)
        let midwayBefore = try await first.longPoll(midway.id, after: 0, wait: 0)
        first.stop()

        let second = try TransferService(configuration: ServiceConfiguration(dataDirectory: folder.path))
        second.start()
        defer { second.stop() }
        let completed = try second.task(done.id, owner: nil)
        #expect(completed.state == .completed && completed.error == nil)
        #expect(try second.body(task: done.id, owner: nil).body == body)
        let lost = try second.task(stalled.id, owner: nil)
        #expect(lost.state == .completed)
        #expect(lost.error?.code == URLErrorCode.networkConnectionLost.rawValue)
        let stillPaused = try second.task(paused.id, owner: nil)
        #expect(stillPaused.state == .suspended)
        _ = try second.resume(task: paused.id, owner: nil)
        let resumed = try await second.completion(paused.id)
        #expect(resumed.error == nil)
        #expect(try second.body(task: paused.id, owner: nil).body == body)
        // Paused mid-transfer: its connection died with the service, so it waits to start over,
        // and the change of its served state is a new version.
        let restarted = try second.task(midway.id, owner: nil)
        #expect(restarted.state == .suspended)
        #expect(restarted.progress.bytesReceived == 0)
        #expect(restarted.response == nil)
        #expect(restarted.version > midwayBefore.version, "progress went from \(midwayBefore.progress.bytesReceived) to 0 bytes under the same version")
        _ = try second.resume(task: midway.id, owner: nil)
        let midwayDone = try await second.completion(midway.id)
        #expect(midwayDone.error == nil)
        #expect(try second.body(task: midway.id, owner: nil).body == slowBody)
        #expect(origin.requests.filter { $0.path == "/slow" }.count == 2)
        // New tasks get new ids.
        let next = try second.createTask(in: session, TaskCreate(request: RequestSpec(url: origin.url("/ok"))), owner: nil)
        #expect(next.id > paused.id)
    }

    @Test func eventRetentionKeepsTheNewestEventsInMemoryInTheStoreAndAcrossARestart() async throws {
        let origin = try OriginServer { request in .text("reply \(request.path)") }
        defer { origin.stop() }
        let folder = try TempDirectory(prefix: "transferd-coretests-events")
        defer { folder.remove() }
        var configuration = ServiceConfiguration(dataDirectory: folder.path)
        configuration.eventRetention = 4
        let first = try TransferService(configuration: configuration)
        first.start()
        let session = try first.createSession(SessionCreate(), owner: nil).session.id
        for index in 0..<4 {
            let task = try first.createTask(in: session, TaskCreate(request: RequestSpec(url: origin.url("/\(index)"))), owner: nil)
            _ = try await first.completion(task.id)
        }
        let kept = try await first.allEvents(session)
        // Four tasks made at least 16 events (response, data, metrics, completion each); only
        // the newest stay.
        let newest = try #require(kept.last)
        #expect(newest.type == .didCompleteWithError)
        #expect(newest.seq >= 16)
        #expect(kept.count >= 4 && kept.count <= 5)
        #expect(kept.map(\.seq) == Array((newest.seq - kept.count + 1)...newest.seq))
        first.stop()

        let stored = try Store(dataDirectory: folder.path)
        let rows = try stored.loadRecentEvents(limit: 1_000).filter { $0.sessionId == session }
        stored.close()
        #expect(rows.count >= 4 && rows.count <= 5, "the store kept \(rows.count) events")
        #expect(rows.last?.seq == newest.seq)

        let second = try TransferService(configuration: configuration)
        second.start()
        defer { second.stop() }
        let reloaded = try await second.allEvents(session)
        #expect(reloaded.last?.seq == newest.seq)
        #expect(reloaded.count <= 4)
        // The feed goes on after the last sequence number ever given.
        let task = try second.createTask(in: session, TaskCreate(request: RequestSpec(url: origin.url("/after"))), owner: nil)
        _ = try await second.completion(task.id)
        let more = try await second.allEvents(session)
        #expect(more.allSatisfy { $0.seq > newest.seq || reloaded.contains($0) })
        #expect((more.last?.seq ?? 0) > newest.seq)
    }
}
