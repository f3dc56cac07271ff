import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Long-polls on a fake engine: a held progress or event poll is answered by the update that
/// changes what it waits for, and only at its deadline when nothing comes.
@Suite struct FakeEngineLongPollTests {
    @Test func aHeldProgressPollIsAnsweredByTheNextUpdate() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), "http://origin.invalid/x")
        engine.respond(to: created.id, with: .response(engine.head(of: created.id, headers: ["Content-Length": "100"])))
        let before = try harness.service.task(created.id, owner: nil)

        let (answers, continuation) = AsyncStream<ProgressSnapshot>.makeStream()
        try harness.service.progress(task: created.id, after: before.version, wait: 30, owner: nil) { snapshot in
            continuation.yield(snapshot)
            continuation.finish()
        }
        #expect(harness.service.heldLongPolls == 1)
        // Answered by the update, not by the poll's deadline; a lost answer fails the test, never hangs it.
        let bound = Task { try await Task.sleep(for: .seconds(5)); continuation.finish() }
        defer { bound.cancel() }
        engine.respond(to: created.id, with: .received(bytes: 40, total: 40, expected: 100, bytesPerSecond: 0))
        var iterator = answers.makeAsyncIterator()
        let answer = try #require(await iterator.next())
        #expect(answer.version > before.version)
        #expect(answer.progress.bytesReceived == 40)
        #expect(harness.service.heldLongPolls == 0)
    }

    @Test func aProgressPollWithNothingNewIsAnsweredUnchangedAtItsDeadline() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), "http://origin.invalid/x")
        let before = try harness.service.task(created.id, owner: nil)
        let start = ContinuousClock.now
        let snapshot = try await harness.progress(created.id, after: before.version, wait: 0.3)
        let elapsed = seconds(since: start)
        #expect(snapshot.version == before.version)
        #expect(elapsed >= 0.25 && elapsed < 3, "answered after \(elapsed) s")
        // A cursor behind the version is answered at once.
        let immediate = ContinuousClock.now
        #expect(try await harness.progress(created.id, after: before.version - 1, wait: 30).version == before.version)
        #expect(seconds(since: immediate) < 1)
        #expect(throws: ServiceError.notFound("no task 999")) { try harness.service.progress(task: 999, after: 0, wait: 0, owner: nil) { _ in } }
    }

    /// Holds one events poll of `session` from after its last event; the answer comes out of the
    /// stream, which ends by itself after 5 s, so a lost answer fails a test and never hangs it.
    private func holdEventPoll(_ harness: ServiceHarness, _ session: String, filter: EventFilter = EventFilter()) async throws -> AsyncStream<EventPage> {
        let after = try await harness.events(session).last?.seq ?? 0
        let (pages, continuation) = AsyncStream<EventPage>.makeStream()
        try harness.service.events(session: session, after: after, limit: 100, wait: 30, owner: nil, filter: filter) { page in
            continuation.yield(page)
            continuation.finish()
        }
        Task { try await Task.sleep(for: .seconds(5)); continuation.finish() }
        return pages
    }

    @Test func aHeldEventPollIsAnsweredByTheEventAnUpdateMakes() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, "http://origin.invalid/x")
        let pages = try await holdEventPoll(harness, session)
        #expect(harness.service.heldLongPolls == 1)
        // Answered by the update, not by the poll's deadline.
        engine.respond(to: created.id, with: .response(engine.head(of: created.id)))
        var iterator = pages.makeAsyncIterator()
        let page = try #require(await iterator.next())
        #expect(page.events.map(\.type) == [.didReceiveResponse])
        #expect(page.events.first?.taskId == created.id)
        #expect(page.next == page.events.last?.seq)
    }

    @Test func aFilteredEventPollIsWokenOnlyByTheTypesItReads() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, "http://origin.invalid/x")
        let pages = try await holdEventPoll(harness, session, filter: EventFilter(types: [.didCompleteWithError]))
        // The response's event is not one the poll reads: it stays held.
        engine.respond(to: created.id, with: .response(engine.head(of: created.id)))
        let soFar: [TaskEvent] = try await harness.events(session)
        #expect(soFar.contains { $0.type == .didReceiveResponse })  // the fake delivers at once
        #expect(harness.service.heldLongPolls == 1)
        engine.succeed(created.id, body: Data("done".utf8))
        var iterator = pages.makeAsyncIterator()
        let page = try #require(await iterator.next())
        #expect(page.events.map(\.type) == [.didCompleteWithError])
        #expect(page.next == page.events.last?.seq)
        // Read again from the start with two types: the others are skipped, `next` past them all.
        let all = try await harness.events(session)
        let again: EventPage = try await withCheckedThrowingContinuation { continuation in
            do {
                try harness.service.events(session: session, after: 0, limit: 100, wait: 0, owner: nil,
                                           filter: EventFilter(types: [.didReceiveResponse, .didCompleteWithError])) { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        let wanted: Set<EventType> = [.didReceiveResponse, .didCompleteWithError]
        let expected: [EventType] = all.map(\.type).filter { wanted.contains($0) }
        #expect(again.events.map(\.type) == expected)
        #expect(expected.count >= 2 && expected.count < all.count)  // both kinds there, and others skipped
        #expect(again.next == all.last?.seq)
    }

    @Test func anEventPollWithNothingNewIsAnsweredEmptyAtItsDeadline() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session()
        _ = try harness.task(in: session, "http://origin.invalid/x")
        let after = try await harness.events(session).last?.seq ?? 0
        let start = ContinuousClock.now
        let page: EventPage = try await withCheckedThrowingContinuation { continuation in
            do {
                try harness.service.events(session: session, after: after, limit: 100, wait: 0.3, owner: nil) { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        let elapsed = seconds(since: start)
        #expect(page.events.isEmpty && page.next == after)
        #expect(elapsed >= 0.25 && elapsed < 3, "answered after \(elapsed) s")
    }

    @Test func aCompletionIsAnsweredToAHeldPollOnceItIsDurable() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), "http://origin.invalid/x")
        let waiting = Task { try await harness.completion(created.id, timeout: 10) }
        engine.succeed(created.id, body: Data("done".utf8))
        let task = try await waiting.value
        #expect(task.state == .completed && task.error == nil)
        // Durable: a fresh read of the store has the completed task.
        harness.service.store.flush()
        #expect(try harness.service.store.loadTasks().first { $0.0.id == created.id }?.0.state == .completed)
    }
}
