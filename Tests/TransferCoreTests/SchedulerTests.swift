import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `Scheduler`: admission by caps (global, per host, per session), class, priority and arrival;
/// preemption of background transfers; discretionary tasks.
@Suite struct SchedulerTests {
    /// Starts admitted by one `admit()` call (preemptions left out).
    private func starts(_ scheduler: inout Scheduler) -> [Int] {
        scheduler.admit().compactMap { if case .start(let id) = $0 { id } else { nil } }
    }

    /// Admits one at a time with a cap of 1, recording the start order.
    private func drain(_ scheduler: inout Scheduler) -> [Int] {
        var order: [Int] = []
        while let next = starts(&scheduler).first {
            order.append(next)
            scheduler.remove(taskId: next)
        }
        return order
    }

    private func ticket(_ id: Int, _ priority: Double = 0.5, host: String = "h", hostLimit: Int = 6,
                        session: String = "s", sessionLimit: Int? = nil, _ schedulingClass: SchedulingClass = .default,
                        discretionary: Bool = false, preemptible: Bool = false) -> Scheduler.Ticket {
        Scheduler.Ticket(taskId: id, schedulingClass: schedulingClass, priority: priority, host: host, hostLimit: hostLimit,
                         session: session, sessionLimit: sessionLimit, discretionary: discretionary, preemptible: preemptible)
    }

    @Test func globalCapAdmitsOnlyThatManyAcrossHosts() {
        var scheduler = Scheduler(maxConcurrent: 2)
        for id in 1...5 { scheduler.enqueue(ticket(id, host: "h\(id)")) }
        #expect(starts(&scheduler) == [1, 2])
        #expect(starts(&scheduler) == [])
        #expect(scheduler.runningCount == 2)
        #expect(scheduler.queue().map(\.taskId) == [3, 4, 5])
        #expect(scheduler.queue().allSatisfy { $0.blockedBy == .globalCap })
    }

    @Test func perHostCapSkipsAFullHostButAdmitsOthers() {
        var scheduler = Scheduler(maxConcurrent: 10)
        for id in 1...4 { scheduler.enqueue(ticket(id, host: "a", hostLimit: 2)) }
        scheduler.enqueue(ticket(5, host: "b", hostLimit: 2))
        #expect(starts(&scheduler) == [1, 2, 5])
        #expect(scheduler.isQueued(3) && scheduler.isQueued(4))
        #expect(scheduler.queue().map(\.blockedBy) == [.hostCap, .hostCap])
        scheduler.remove(taskId: 1)
        #expect(starts(&scheduler) == [3])
        scheduler.remove(taskId: 5)  // frees host b, which has nothing queued
        #expect(starts(&scheduler) == [])
    }

    @Test func perSessionCapLimitsOneSessionAcrossItsHosts() {
        var scheduler = Scheduler(maxConcurrent: 10)
        for id in 1...4 { scheduler.enqueue(ticket(id, host: "a\(id)", session: "one", sessionLimit: 2)) }
        scheduler.enqueue(ticket(5, host: "b", session: "two"))
        #expect(starts(&scheduler) == [1, 2, 5])
        #expect(scheduler.queue().map(\.blockedBy) == [.sessionCap, .sessionCap])
        scheduler.remove(taskId: 2)
        #expect(starts(&scheduler) == [3])
    }

    @Test func higherPriorityIsAdmittedFirst() {
        var scheduler = Scheduler(maxConcurrent: 1)
        for (id, priority) in [(1, 0.25), (2, 0.75), (3, 0.5), (4, 1.0)] { scheduler.enqueue(ticket(id, priority)) }
        #expect(drain(&scheduler) == [4, 2, 3, 1])
    }

    @Test func equalPriorityIsFirstComeFirstServedNotByID() {
        var scheduler = Scheduler(maxConcurrent: 1)
        for id in [9, 3, 7, 1] { scheduler.enqueue(ticket(id)) }
        #expect(drain(&scheduler) == [9, 3, 7, 1])
    }

    @Test func classComesBeforePriority() {
        var scheduler = Scheduler(maxConcurrent: 1)
        scheduler.enqueue(ticket(1, 1.0, .background))
        scheduler.enqueue(ticket(2, 0.9, .default))
        scheduler.enqueue(ticket(3, 0.1, .interactive))
        scheduler.enqueue(ticket(4, 0.5, .streaming))
        scheduler.enqueue(ticket(5, 0.2, .default))
        scheduler.enqueue(ticket(6, 0.8, .interactive))
        #expect(drain(&scheduler) == [6, 3, 4, 2, 5, 1])
    }

    @Test func reprioritiseMovesAQueuedTaskAtOnce() {
        var scheduler = Scheduler(maxConcurrent: 1)
        for id in 1...4 { scheduler.enqueue(ticket(id, 0.25)) }
        #expect(starts(&scheduler) == [1])
        scheduler.reprioritise(taskId: 4, priority: 0.75)
        #expect(scheduler.queue().map(\.taskId) == [4, 2, 3])
        scheduler.reprioritise(taskId: 2, priority: 0.1)
        #expect(scheduler.queue().map(\.taskId) == [4, 3, 2])
        // Back to the old priority, it takes its old place by arrival order.
        scheduler.reprioritise(taskId: 2, priority: 0.25)
        #expect(scheduler.queue().map(\.taskId) == [4, 2, 3])
        // A running task keeps its slot.
        scheduler.reprioritise(taskId: 1, priority: 1)
        #expect(scheduler.isRunning(1))
        #expect(starts(&scheduler) == [])
        scheduler.remove(taskId: 1)
        #expect(drain(&scheduler) == [4, 2, 3])
    }

    @Test func reprioritisingATaskParkedOnAFullHostKeepsItWaitingThere() {
        var scheduler = Scheduler(maxConcurrent: 10)
        scheduler.enqueue(ticket(1, host: "a", hostLimit: 1))
        scheduler.enqueue(ticket(2, host: "a", hostLimit: 1))
        scheduler.enqueue(ticket(3, host: "a", hostLimit: 1))
        #expect(starts(&scheduler) == [1])
        scheduler.reprioritise(taskId: 3, priority: 0.9)
        #expect(starts(&scheduler) == [])
        scheduler.remove(taskId: 1)
        #expect(starts(&scheduler) == [3])
        scheduler.remove(taskId: 3)
        #expect(starts(&scheduler) == [2])
    }

    @Test func removingAQueuedTaskMeansItIsNeverAdmitted() {
        var scheduler = Scheduler(maxConcurrent: 4)
        scheduler.enqueue(ticket(1))
        scheduler.enqueue(ticket(2))
        scheduler.remove(taskId: 1)
        #expect(!scheduler.isQueued(1))
        #expect(starts(&scheduler) == [2])
    }

    @Test func enqueueTwiceOrWhileRunningIsIgnored() {
        var scheduler = Scheduler(maxConcurrent: 4)
        scheduler.enqueue(ticket(1, 0.5))
        scheduler.enqueue(ticket(1, 0.9))
        #expect(scheduler.queuedCount == 1)
        #expect(starts(&scheduler) == [1])
        scheduler.enqueue(ticket(1))
        #expect(scheduler.queuedCount == 0)
    }

    @Test func capsBelowOneAreOne() {
        var scheduler = Scheduler(maxConcurrent: 0)
        #expect(scheduler.maxConcurrent == 1)
        scheduler.enqueue(ticket(1, host: "a", hostLimit: 0))
        scheduler.enqueue(ticket(2, host: "b", hostLimit: -3))
        #expect(starts(&scheduler) == [1])
    }

    @Test func anInteractiveTaskPreemptsTheLowestPriorityBackgroundDownload() {
        var scheduler = Scheduler(maxConcurrent: 2)
        scheduler.enqueue(ticket(1, 0.6, host: "a", .background, preemptible: true))
        scheduler.enqueue(ticket(2, 0.4, host: "b", .background, preemptible: true))
        #expect(starts(&scheduler) == [1, 2])
        scheduler.enqueue(ticket(3, host: "c", .interactive))
        #expect(scheduler.admit() == [.preempt(2), .start(3)])
        #expect(!scheduler.isRunning(2) && !scheduler.isQueued(2))
        // The preempted task comes back (the service queues it once the engine let it go) and
        // waits for a slot; a default task takes the other background slot.
        scheduler.enqueue(ticket(2, 0.4, host: "b", .background, preemptible: true))
        scheduler.enqueue(ticket(4, host: "d", .default))
        #expect(scheduler.admit() == [.preempt(1), .start(4)])
        scheduler.remove(taskId: 3)
        #expect(starts(&scheduler) == [2])
    }

    @Test func nothingIsPreemptedForBackgroundWorkOrWhenNoneIsPreemptible() {
        var scheduler = Scheduler(maxConcurrent: 1)
        scheduler.enqueue(ticket(1, 0.1, host: "a", .background, preemptible: true))
        #expect(starts(&scheduler) == [1])
        scheduler.enqueue(ticket(2, 1.0, host: "b", .background, preemptible: true))
        #expect(scheduler.admit() == [])
        var other = Scheduler(maxConcurrent: 1)
        other.enqueue(ticket(1, host: "a", .background, preemptible: false))
        #expect(starts(&other) == [1])
        other.enqueue(ticket(2, host: "b", .interactive))
        #expect(other.admit() == [])
    }

    @Test func noPreemptionForATaskWhoseHostIsFull() {
        var scheduler = Scheduler(maxConcurrent: 2)
        scheduler.enqueue(ticket(1, host: "a", hostLimit: 1, .default))
        scheduler.enqueue(ticket(2, host: "b", .background, preemptible: true))
        #expect(starts(&scheduler) == [1, 2])
        scheduler.enqueue(ticket(3, host: "a", hostLimit: 1, .interactive))
        #expect(scheduler.admit() == [])
        #expect(scheduler.isRunning(2))
    }

    @Test func discretionaryTasksWaitUntilNothingElseIsQueued() {
        var scheduler = Scheduler(maxConcurrent: 1)
        scheduler.enqueue(ticket(1, 1.0, host: "a", .background, discretionary: true))
        scheduler.enqueue(ticket(2, 0.1, host: "b", .background))
        #expect(drain(&scheduler) == [2, 1])
        // With work queued that cannot start yet (its host is full), they still wait.
        var busy = Scheduler(maxConcurrent: 5)
        busy.enqueue(ticket(1, host: "a", hostLimit: 1))
        busy.enqueue(ticket(2, host: "a", hostLimit: 1))
        busy.enqueue(ticket(3, host: "b", discretionary: true))
        #expect(starts(&busy) == [1])
        #expect(busy.queue().last?.blockedBy == .discretionary)
        busy.remove(taskId: 1)
        #expect(starts(&busy) == [2, 3])
    }

    @Test func discretionaryTasksWaitForTheirWindow() {
        var scheduler = Scheduler(maxConcurrent: 2)
        scheduler.discretionaryWindowOpen = false
        scheduler.enqueue(ticket(1, discretionary: true))
        #expect(starts(&scheduler) == [])
        scheduler.discretionaryWindowOpen = true
        #expect(starts(&scheduler) == [1])
    }

    @Test func countsByClass() {
        var scheduler = Scheduler(maxConcurrent: 1)
        scheduler.enqueue(ticket(1, 0.5, .interactive))
        scheduler.enqueue(ticket(2, 0.5, .background))
        scheduler.enqueue(ticket(3, 0.5, .background))
        _ = scheduler.admit()
        #expect(scheduler.runningByClass[.interactive] == 1)
        #expect(scheduler.queuedByClass[.background] == 2)
        scheduler.remove(taskId: 3)
        #expect(scheduler.queuedByClass[.background] == 1)
    }

    /// A task whose transfer ended while its completion is recorded holds no connection and
    /// no transfer: the next task for its host starts at once, under the global cap too. Its
    /// session's cap (tasks) still counts it until it is removed.
    @Test func aTaskWhoseTransferEndedGivesItsHostSlotAndGlobalPlaceButNotItsSessionSlot() {
        var scheduler = Scheduler(maxConcurrent: 2)
        scheduler.enqueue(ticket(1, host: "a", hostLimit: 1))
        scheduler.enqueue(ticket(2, host: "a", hostLimit: 1))
        scheduler.enqueue(ticket(3, host: "b", hostLimit: 1))
        scheduler.enqueue(ticket(4, host: "c", hostLimit: 1))
        #expect(starts(&scheduler) == [1, 3])
        let freed = scheduler.transferEnded(taskId: 1)
        let again = scheduler.transferEnded(taskId: 1)
        let queued = scheduler.transferEnded(taskId: 4)
        #expect(freed)
        #expect(!again, "told twice, it frees once")
        #expect(!queued, "a queued task has no transfer to end")
        #expect(scheduler.runningCount == 1 && scheduler.runningByClass[.default] == 1)
        #expect(scheduler.isRunning(1))
        #expect(starts(&scheduler) == [2])
        #expect(starts(&scheduler) == [], "two transfers run: the global cap is full")
        scheduler.remove(taskId: 1)
        #expect(starts(&scheduler) == [], "removing it frees nothing more")
        #expect(scheduler.runningCount == 2)
        scheduler.transferEnded(taskId: 3)
        #expect(starts(&scheduler) == [4])

        var capped = Scheduler(maxConcurrent: 8)
        capped.enqueue(ticket(1, host: "a", session: "s", sessionLimit: 1))
        capped.enqueue(ticket(2, host: "b", session: "s", sessionLimit: 1))
        #expect(starts(&capped) == [1])
        capped.transferEnded(taskId: 1)
        #expect(starts(&capped) == [], "maximumConcurrentTasks counts the task until it is removed")
        #expect(capped.queue().first?.blockedBy == .sessionCap)
        capped.remove(taskId: 1)
        #expect(starts(&capped) == [2])
        capped.remove(taskId: 2)
        #expect(capped.bookkeeping == (0, 0))
    }

    /// A background transfer that ended is not preempted: it has nothing left to give back.
    @Test func aTransferThatEndedIsNoPreemptionVictim() {
        var scheduler = Scheduler(maxConcurrent: 1)
        scheduler.enqueue(ticket(1, host: "a", .background, preemptible: true))
        #expect(starts(&scheduler) == [1])
        #expect(scheduler.preemptibleSlots == 1)
        scheduler.transferEnded(taskId: 1)
        #expect(scheduler.preemptibleSlots == 0)
        scheduler.enqueue(ticket(2, host: "b", .interactive))
        #expect(scheduler.admit() == [.start(2)])
    }

    /// Random operations against a plain reference (a sorted scan of every queued task): the
    /// heaps, parking and lazy deletion must admit exactly what the scan admits.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func matchesAPlainScan(seed: UInt64) {
        var random = SplitMix(seed)
        var scheduler = Scheduler(maxConcurrent: 4)
        var reference = ReferenceScheduler(maxConcurrent: 4)
        var nextId = 1
        for _ in 0..<2_000 {
            switch random.next() % 10 {
            case 0...3:
                // As in the service, a host key belongs to one session, and a host's and a
                // session's limits are the same for all their tasks.
                let host = Int(random.next() % 3), session = Int(random.next() % 2)
                let t = ticket(nextId, Double(random.next() % 4) / 4, host: "s\(session) h\(host)", hostLimit: 1 + host % 2,
                               session: "s\(session)", sessionLimit: session == 0 ? nil : 2,
                               SchedulingClass.allCases[Int(random.next() % 4)], discretionary: random.next() % 8 == 0)
                nextId += 1
                scheduler.enqueue(t)
                reference.enqueue(t)
            case 4...5:
                guard nextId > 1 else { continue }
                let id = 1 + Int(random.next() % UInt64(nextId - 1))
                scheduler.remove(taskId: id)
                reference.remove(id)
            case 6:
                guard nextId > 1 else { continue }
                let id = 1 + Int(random.next() % UInt64(nextId - 1))
                let priority = Double(random.next() % 4) / 4
                scheduler.reprioritise(taskId: id, priority: priority)
                reference.reprioritise(id, priority)
            case 7:
                guard nextId > 1 else { continue }
                let id = 1 + Int(random.next() % UInt64(nextId - 1))
                scheduler.transferEnded(taskId: id)
                reference.transferEnded(id)
            default:
                #expect(starts(&scheduler) == reference.admit())
            }
        }
        // Once every task has left, nothing is kept for their hosts and sessions.
        for id in 1..<nextId { scheduler.remove(taskId: id) }
        #expect(scheduler.bookkeeping == (0, 0))
    }

    @Test(arguments: [
        ("http://Example.COM/a", "s http://example.com:80"),
        ("http://example.com:80/b?q", "s http://example.com:80"),
        ("https://example.com/", "s https://example.com:443"),
        ("https://example.com:443/x", "s https://example.com:443"),
        ("http://example.com:8080/", "s http://example.com:8080"),
        ("HTTPS://127.0.0.1:9/", "s https://127.0.0.1:9"),
    ])
    func hostKeyDefaultsThePort(url: String, key: String) {
        #expect(Scheduler.hostKey(sessionId: "s", url: url) == key)
    }

    @Test func hostKeySeparatesSessionsAndSchemes() {
        let a = Scheduler.hostKey(sessionId: "one", url: "http://h/")
        #expect(a != Scheduler.hostKey(sessionId: "two", url: "http://h/"))
        #expect(a != Scheduler.hostKey(sessionId: "one", url: "https://h/"))
        #expect(a == Scheduler.hostKey(sessionId: "one", url: "http://h:80/other"))
    }
}

/// The scheduler's rules as the simplest code: every queued task in a list, sorted and scanned.
private struct ReferenceScheduler {
    let maxConcurrent: Int
    var queued: [(ticket: Scheduler.Ticket, order: Int)] = []
    var running: [Int: Scheduler.Ticket] = [:]
    /// Running tasks whose transfer ended: they count against their session's cap only.
    var ended: Set<Int> = []
    var order = 0

    mutating func enqueue(_ ticket: Scheduler.Ticket) {
        guard running[ticket.taskId] == nil, !queued.contains(where: { $0.ticket.taskId == ticket.taskId }) else { return }
        order += 1
        queued.append((ticket, order))
    }

    mutating func remove(_ id: Int) {
        running[id] = nil
        ended.remove(id)
        queued.removeAll { $0.ticket.taskId == id }
    }

    mutating func transferEnded(_ id: Int) {
        if running[id] != nil { ended.insert(id) }
    }

    mutating func reprioritise(_ id: Int, _ priority: Double) {
        guard let index = queued.firstIndex(where: { $0.ticket.taskId == id }) else { return }
        queued[index].ticket.priority = priority
    }

    mutating func admit() -> [Int] {
        queued.sort { a, b in
            if a.ticket.discretionary != b.ticket.discretionary { return !a.ticket.discretionary }
            if a.ticket.schedulingClass != b.ticket.schedulingClass { return a.ticket.schedulingClass < b.ticket.schedulingClass }
            if a.ticket.priority != b.ticket.priority { return a.ticket.priority > b.ticket.priority }
            return a.order < b.order
        }
        var started: [Int] = []
        var index = 0
        while index < queued.count {
            let ticket = queued[index].ticket
            if ticket.discretionary && queued.contains(where: { !$0.ticket.discretionary }) { break }
            let transferring = running.values.filter { !ended.contains($0.taskId) }
            let onHost = transferring.filter { $0.host == ticket.host }.count
            let inSession = running.values.filter { $0.session == ticket.session }.count
            if onHost >= max(1, ticket.hostLimit) || ticket.sessionLimit.map({ inSession >= $0 }) == true {
                index += 1
                continue
            }
            if transferring.count >= maxConcurrent { break }
            running[ticket.taskId] = ticket
            queued.remove(at: index)
            started.append(ticket.taskId)
        }
        return started
    }
}

/// A small seeded generator, so a failing sequence can be replayed.
private struct SplitMix {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
