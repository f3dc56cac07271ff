import Testing
@testable import TransferService

/// `Scheduler`'s extra connections of running tasks (segmented downloads, issue 18 item 2):
/// each counts against the per-host cap of the host it goes to, and they are granted in
/// admission order among the queued tasks bound for that host.
@Suite struct SchedulerConnectionTests {
    private func ticket(_ id: Int, _ priority: Double = 0.5, host: String = "h", hostLimit: Int = 4) -> Scheduler.Ticket {
        Scheduler.Ticket(taskId: id, priority: priority, host: host, hostLimit: hostLimit, session: "s")
    }

    private struct Admitted: Equatable {
        var starts: [Int] = []
        var grants: [Int] = []
    }

    private func admit(_ scheduler: inout Scheduler, host: String = "h") -> Admitted {
        var admitted = Admitted()
        for decision in scheduler.admit() {
            switch decision {
            case .start(let id): admitted.starts.append(id)
            case .grant(let id, let granted): if granted == host { admitted.grants.append(id) }
            case .preempt: break
            }
        }
        return admitted
    }

    @Test func extraConnectionsCountAgainstTheHostCap() {
        var scheduler = Scheduler(maxConcurrent: 100)
        // Two 4-segment downloads, then single downloads, all to one host with a cap of 4.
        for id in 1...6 { scheduler.enqueue(ticket(id)) }
        #expect(admit(&scheduler) == Admitted(starts: [1, 2, 3, 4]))
        scheduler.wantConnections(taskId: 1, hosts: ["h"], wanted: 3)
        scheduler.wantConnections(taskId: 2, hosts: ["h"], wanted: 3)
        #expect(admit(&scheduler) == Admitted(), "the host is full")
        // A single download ends: its slot goes to the first in line, download 1 (it arrived
        // before the queued singles), not to queued task 5.
        scheduler.remove(taskId: 3)
        #expect(admit(&scheduler) == Admitted(grants: [1]))
        scheduler.remove(taskId: 4)
        #expect(admit(&scheduler) == Admitted(grants: [1]))
        #expect(scheduler.grantedConnections(taskId: 1) == 2 && scheduler.isQueued(5))
        // Download 1 gives one back (its part ended with nothing left to take) and wants no
        // more: download 2 is next in line, then the singles.
        scheduler.returnConnections(taskId: 1, host: "h")
        scheduler.wantConnections(taskId: 1, hosts: ["h"], wanted: 1)
        #expect(admit(&scheduler) == Admitted(grants: [2]))
        scheduler.wantConnections(taskId: 2, hosts: ["h"], wanted: 1)
        scheduler.remove(taskId: 1)  // its own slot and its grant
        #expect(admit(&scheduler) == Admitted(starts: [5, 6]))
        #expect(scheduler.grantedConnections(taskId: 2) == 1)
        scheduler.remove(taskId: 2)
        scheduler.remove(taskId: 5)
        scheduler.remove(taskId: 6)
        #expect(scheduler.bookkeeping == (0, 0))
    }

    @Test func aHigherPriorityQueuedTaskGetsTheSlotBeforeALowerPrioritySegment() {
        var scheduler = Scheduler(maxConcurrent: 100)
        scheduler.enqueue(ticket(1, 0.2, hostLimit: 2))  // a segmented download of low priority
        scheduler.enqueue(ticket(2, 0.5, hostLimit: 2))
        #expect(admit(&scheduler) == Admitted(starts: [2, 1]))
        scheduler.wantConnections(taskId: 1, hosts: ["h"], wanted: 3)
        scheduler.enqueue(ticket(3, 0.9, hostLimit: 2))  // higher: waits for the host, parked
        scheduler.enqueue(ticket(4, 0.1, hostLimit: 2))  // lower than the download
        #expect(admit(&scheduler) == Admitted())
        scheduler.remove(taskId: 2)
        #expect(admit(&scheduler) == Admitted(starts: [3]), "the segment took the slot of a higher-priority task")
        scheduler.remove(taskId: 3)
        #expect(admit(&scheduler) == Admitted(grants: [1]), "task 4 has a lower priority than the download")
        #expect(scheduler.isQueued(4))
        // Raised above the download, task 4 comes first for the next slot.
        scheduler.reprioritise(taskId: 4, priority: 0.3)
        scheduler.returnConnections(taskId: 1, host: "h")
        #expect(admit(&scheduler) == Admitted(starts: [4]))
    }

    @Test func aMirrorsConnectionsCountAgainstTheMirrorsHost() {
        var scheduler = Scheduler(maxConcurrent: 100)
        scheduler.enqueue(ticket(1, host: "h", hostLimit: 2))
        scheduler.enqueue(ticket(2, host: "h", hostLimit: 2))
        #expect(admit(&scheduler).starts == [1, 2])
        // Its host is full; the mirror's has room for two (the session's cap per host).
        scheduler.wantConnections(taskId: 1, hosts: ["h", "m"], wanted: 3)
        #expect(admit(&scheduler, host: "m") == Admitted(grants: [1, 1]))
        #expect(scheduler.grantedConnections(taskId: 1) == 2)
        // A task queued for the mirror's host waits for a slot there.
        scheduler.enqueue(ticket(3, host: "m", hostLimit: 2))
        #expect(admit(&scheduler, host: "m") == Admitted())
        // One of its parts there ended with nothing left to take: it gives the connection
        // back and wants no more than it holds.
        scheduler.returnConnections(taskId: 1, host: "m")
        scheduler.wantConnections(taskId: 1, hosts: ["h", "m"], wanted: 1)
        #expect(admit(&scheduler, host: "m") == Admitted(starts: [3]))
        // The mirror was dropped: no more grants there; one on its own host when it frees.
        scheduler.wantConnections(taskId: 1, hosts: ["h"], wanted: 3)
        scheduler.remove(taskId: 3)
        #expect(admit(&scheduler, host: "m") == Admitted())
        scheduler.remove(taskId: 2)
        #expect(admit(&scheduler, host: "h") == Admitted(grants: [1]))
        scheduler.remove(taskId: 1)
        #expect(scheduler.bookkeeping == (0, 0))
    }

    @Test func aTaskNeverHoldsMoreThanTheCapOrWhatItWants() {
        var scheduler = Scheduler(maxConcurrent: 100)
        scheduler.enqueue(ticket(1, hostLimit: 3))
        #expect(admit(&scheduler).starts == [1])
        scheduler.wantConnections(taskId: 1, hosts: ["h"], wanted: 15)
        #expect(admit(&scheduler) == Admitted(grants: [1, 1]))
        #expect(scheduler.grantedConnections(taskId: 1) == 2)
        // A task that is not running asks for nothing.
        scheduler.wantConnections(taskId: 9, hosts: ["h"], wanted: 3)
        #expect(scheduler.grantedConnections(taskId: 9) == 0)
        scheduler.remove(taskId: 1)
        #expect(scheduler.bookkeeping == (0, 0))
    }
}
