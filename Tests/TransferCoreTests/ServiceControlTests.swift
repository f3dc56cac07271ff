import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Suspend, resume and cancel of running transfers against a real origin (the connection kept,
/// paused, closed), held long-polls at stop, and events across a restart. The commands the
/// service sends and a restart's settlement are tested on a fake engine (`FakeEngineLifecycleTests`,
/// `FakeEngineRestartTests`).
@Suite struct ServiceControlTests {
    /// The body in 1 KiB writes every 50 ms (20 KiB/s), slow enough to act on mid-transfer even
    /// when the machine is busy: the whole body would fit in the socket buffers, so only the
    /// origin's pace keeps it from arriving at once.
    static func slowOrigin(_ body: Data) throws -> OriginServer {
        try OriginServer { _ in .slowBody(body: body, bytesPerWrite: 1_024, interval: .milliseconds(50)) }
    }

    @Test func suspendThenResumeDeliversTheExactBodyOnTheSameConnection() async throws {
        let body = randomBytes(80 * 1_024)  // about 4 s
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
