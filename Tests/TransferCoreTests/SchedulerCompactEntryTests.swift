import Testing
@testable import TransferModel
@testable import TransferService

/// The scheduler keeps a queued task's ticket in a compact entry (limits in 32 bits, host and
/// session as interned numbers): every part of the ticket still decides as it did.
@Suite struct SchedulerCompactEntryTests {
    private func ticket(_ id: Int, _ priority: Double = 0.5, host: String, hostLimit: Int, session: String,
                        sessionLimit: Int?, _ schedulingClass: SchedulingClass = .default,
                        discretionary: Bool = false, preemptible: Bool = false) -> Scheduler.Ticket {
        Scheduler.Ticket(taskId: id, schedulingClass: schedulingClass, priority: priority, host: host, hostLimit: hostLimit,
                         session: session, sessionLimit: sessionLimit, discretionary: discretionary, preemptible: preemptible)
    }

    private func starts(_ scheduler: inout Scheduler) -> [Int] {
        scheduler.admit().compactMap { if case .start(let id) = $0 { id } else { nil } }
    }

    @Test func limitsBeyond32BitsStillMeanNoLimitAndASessionCapOfZeroAdmitsNothing() {
        var scheduler = Scheduler(maxConcurrent: 100)
        for id in 1...20 { scheduler.enqueue(ticket(id, host: "h", hostLimit: .max, session: "open", sessionLimit: .max)) }
        scheduler.enqueue(ticket(21, host: "h2", hostLimit: 6, session: "closed", sessionLimit: 0))
        #expect(starts(&scheduler) == Array(1...20))
        #expect(scheduler.queue().map(\.taskId) == [21])
        #expect(scheduler.queue().map(\.blockedBy) == [.sessionCap])
    }

    @Test func eachQueuedTaskKeepsItsClassPriorityAndFlags() {
        var scheduler = Scheduler(maxConcurrent: 1)
        scheduler.enqueue(ticket(1, 0.5, host: "busy", hostLimit: 1, session: "a", sessionLimit: nil, .background, preemptible: true))
        #expect(starts(&scheduler) == [1])
        scheduler.enqueue(ticket(2, 0.25, host: "x", hostLimit: 3, session: "b", sessionLimit: 4, .interactive))
        scheduler.enqueue(ticket(3, 0.75, host: "y", hostLimit: 3, session: "c", sessionLimit: nil, .default, discretionary: true))
        let listed = scheduler.queue()
        #expect(listed.map(\.taskId) == [2, 3])
        #expect(listed.map(\.schedulingClass) == [.interactive, .default])
        #expect(listed.map(\.priority) == [0.25, 0.75])
        #expect(listed.map(\.discretionary) == [false, true])
        // The interactive task takes the preemptible background task's slot.
        #expect(scheduler.admit() == [.preempt(1), .start(2)])
        scheduler.reprioritise(taskId: 3, priority: 0.1)
        #expect(scheduler.queue().map(\.priority) == [0.1])
    }

    @Test func sessionsAndHostsOfTheSameNameInDifferentRolesStayApart() {
        var scheduler = Scheduler(maxConcurrent: 10)
        // One session per host key, but the session id equals another task's host key.
        scheduler.enqueue(ticket(1, host: "same", hostLimit: 1, session: "same", sessionLimit: 1))
        scheduler.enqueue(ticket(2, host: "same", hostLimit: 1, session: "other", sessionLimit: nil))
        scheduler.enqueue(ticket(3, host: "third", hostLimit: 5, session: "same", sessionLimit: 1))
        scheduler.enqueue(ticket(4, host: "fourth", hostLimit: 5, session: "other", sessionLimit: nil))
        #expect(starts(&scheduler) == [1, 4])
        #expect(Set(scheduler.queue().map(\.blockedBy)) == [.hostCap, .sessionCap])
        scheduler.remove(taskId: 1)
        #expect(Set(starts(&scheduler)) == [2, 3])
        for id in 1...4 { scheduler.remove(taskId: id) }
        #expect(scheduler.bookkeeping == (0, 0))
    }
}
