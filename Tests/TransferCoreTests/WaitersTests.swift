import Testing
import FoundationEssentials
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `Waiters`: held long-polls, each answered exactly once.
@Suite struct WaitersTests {
    private let noProgress: Waiters.ProgressCallback = { _ in }
    private let noEvents: Waiters.EventsCallback = { _ in }

    @Test func takeProgressReturnsOnlyWaitersBelowTheVersion() {
        var waiters = Waiters()
        let a = waiters.add(task: 1, after: 3, callback: noProgress)
        let b = waiters.add(task: 1, after: 5, callback: noProgress)
        let c = waiters.add(task: 2, after: 0, callback: noProgress)
        #expect(waiters.count == 3)

        #expect(waiters.takeProgress(task: 1, below: 3).isEmpty)  // 3 is not below 3
        #expect(waiters.takeProgress(task: 1, below: 5).map(\.id) == [a])
        #expect(waiters.count == 2)
        #expect(waiters.takeProgress(task: 1, below: 5).isEmpty)  // taken once only
        #expect(waiters.takeProgress(task: 1, below: 9).map(\.id) == [b])
        #expect(waiters.progress[1] == nil)
        #expect(waiters.takeProgress(task: 3, below: 100).isEmpty)
        #expect(waiters.takeProgress(task: 2, below: 1).map(\.id) == [c])
        #expect(waiters.count == 0)
    }

    @Test func takeEventsReturnsOnlyWaitersBelowTheSequence() {
        var waiters = Waiters()
        let a = waiters.add(session: "s", after: 10, limit: 5, callback: noEvents)
        let b = waiters.add(session: "s", after: 20, limit: 7, callback: noEvents)
        _ = waiters.add(session: "t", after: 0, limit: 1, callback: noEvents)
        #expect(waiters.takeEvents(session: "s", for: event(10)).isEmpty)
        let taken = waiters.takeEvents(session: "s", for: event(11))
        #expect(taken.map(\.id) == [a])
        #expect(taken.first?.limit == 5)
        #expect(taken.first?.after == 10)
        #expect(waiters.takeEvents(session: "s", for: event(21)).map(\.id) == [b])
        #expect(waiters.events["s"] == nil)
        #expect(waiters.count == 1)
    }

    @Test func aWaiterForOneTaskIsWokenOnlyByThatTasksEvents() {
        var waiters = Waiters()
        let mine = waiters.add(session: "s", after: 0, limit: 5, filter: EventFilter(taskId: 7), callback: noEvents)
        let all = waiters.add(session: "s", after: 0, limit: 5, callback: noEvents)
        #expect(waiters.takeEvents(session: "s", for: event(1, task: 8)).map(\.id) == [all])
        #expect(waiters.takeEvents(session: "s", for: event(2, task: nil)).isEmpty)
        #expect(waiters.takeEvents(session: "s", for: event(3, task: 7)).map(\.id) == [mine])
    }

    @Test func takeByIDAnswersOnce() {
        var waiters = Waiters()
        let p = waiters.add(task: 7, after: 2, callback: noProgress)
        let e = waiters.add(session: "s", after: 4, limit: 9, callback: noEvents)

        guard case .progress(let task, let waiter)? = waiters.take(id: p) else {
            Issue.record("expected the progress waiter")
            return
        }
        #expect(task == 7)
        #expect(waiter.id == p && waiter.after == 2)
        #expect(waiters.take(id: p) == nil)
        #expect(waiters.progress[7] == nil)

        guard case .events(let session, let eventsWaiter)? = waiters.take(id: e) else {
            Issue.record("expected the events waiter")
            return
        }
        #expect(session == "s")
        #expect(eventsWaiter.id == e && eventsWaiter.after == 4 && eventsWaiter.limit == 9)
        #expect(waiters.take(id: e) == nil)
        #expect(waiters.count == 0)
    }

    @Test func aWaiterAnsweredByAChangeIsGoneForItsDeadline() {
        var waiters = Waiters()
        let id = waiters.add(task: 1, after: 0, callback: noProgress)
        #expect(waiters.takeProgress(task: 1, below: 1).count == 1)
        #expect(waiters.take(id: id) == nil)
        let other = waiters.add(session: "s", after: 0, limit: 1, callback: noEvents)
        #expect(waiters.takeEvents(session: "s", for: event(1)).count == 1)
        #expect(waiters.take(id: other) == nil)
        #expect(waiters.take(id: 12345) == nil)
    }

    @Test func takeByIDLeavesTheOtherWaitersOfTheSameTask() {
        var waiters = Waiters()
        let a = waiters.add(task: 1, after: 0, callback: noProgress)
        let b = waiters.add(task: 1, after: 0, callback: noProgress)
        _ = waiters.take(id: a)
        #expect(waiters.progress[1]?.map(\.id) == [b])
        #expect(waiters.count == 1)
    }

    @Test func takeAllEmptiesEverything() {
        var waiters = Waiters()
        let a = waiters.add(task: 1, after: 0, callback: noProgress)
        let b = waiters.add(task: 2, after: 0, callback: noProgress)
        let c = waiters.add(session: "s", after: 0, limit: 1, callback: noEvents)
        let all = waiters.takeAll()
        #expect(all.progress.values.flatMap { $0 }.map(\.id).sorted() == [a, b])
        #expect(all.events["s"]?.map(\.id) == [c])
        #expect(waiters.count == 0)
        #expect(waiters.take(id: a) == nil)
        #expect(waiters.takeProgress(task: 1, below: 100).isEmpty)
        #expect(waiters.takeAll().progress.isEmpty)
        // Ids are never reused after takeAll.
        #expect(waiters.add(task: 1, after: 0, callback: noProgress) > c)
    }

    /// An event of seq `seq` (its type and fields do not matter to the waiters).
    private func event(_ seq: Int, task: Int? = 1) -> TaskEvent {
        TaskEvent(seq: seq, sessionId: "s", taskId: task, type: .didCompleteWithError, time: Date(timeIntervalSince1970: 0), fields: [:])
    }
}
