import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `Holds` on its own: due order, release, replacement, and its heap kept small.
@Suite struct HoldsTests {
    private let t0 = Date(timeIntervalSince1970: 1_000)

    @Test func dueHoldsComeOutEarliestFirstAndOnlyWhenDue() {
        var holds = Holds()
        holds.insert(task: 1, until: t0 + 3, phase: .retrying)
        holds.insert(task: 2, until: t0 + 1, phase: .waiting)
        holds.insert(task: 3, until: t0 + 2, phase: .retrying)
        #expect(holds.nextDue() == t0 + 1)
        #expect(holds.takeDue(now: t0) == [])
        #expect(holds.takeDue(now: t0 + 2) == [2, 3])
        #expect(holds.hold(of: 2) == nil && holds.hold(of: 1)?.phase == .retrying)
        #expect(holds.nextDue() == t0 + 3)
        #expect(holds.takeDue(now: t0 + 10) == [1])
        #expect(holds.nextDue() == nil && holds.isEmpty)
    }

    @Test func aReleasedHoldNeverComesDueAndAReplacedOneComesDueOnce() {
        var holds = Holds()
        holds.insert(task: 1, until: t0 + 1, phase: .retrying)
        holds.insert(task: 2, until: t0 + 2, phase: .retrying)
        #expect(holds.remove(task: 1)?.until == t0 + 1)
        #expect(holds.remove(task: 1) == nil)
        #expect(holds.nextDue() == t0 + 2)
        holds.insert(task: 2, until: t0 + 5, phase: .waiting)  // moved later
        #expect(holds.nextDue() == t0 + 5)
        #expect(holds.takeDue(now: t0 + 3) == [])
        #expect(holds.takeDue(now: t0 + 5) == [2])
        #expect(holds.takeDue(now: t0 + 100) == [])
    }

    @Test func manyHoldsReleasedEarlyLeaveTheRightOnesDue() {
        var holds = Holds()
        for id in 0..<10_000 { holds.insert(task: id, until: t0 + Double(id % 97), phase: .retrying) }
        for id in 0..<10_000 where id % 10 != 0 { holds.remove(task: id) }
        #expect(holds.count == 1_000)
        let due = holds.takeDue(now: t0 + 200)
        #expect(due.count == 1_000 && Set(due) == Set(stride(from: 0, to: 10_000, by: 10)))
        let times = due.map { Double($0 % 97) }
        #expect(times == times.sorted())
    }
}
