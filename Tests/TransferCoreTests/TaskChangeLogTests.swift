import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `TaskChangeLog` as a value: stamps in change order, each task once at its latest change,
/// stale entries compacted away without changing answers, removals kept up to a bound, and
/// waiters woken only by what their owner may see.
@Suite struct TaskChangeLogTests {
    private func task(_ id: Int, owner: String? = "alpha") -> TransferTask {
        let request = RequestInfo(url: "http://h/\(id)", method: "GET", headers: [:], bodyLength: nil, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60, networkServiceType: .default)
        return TransferTask(id: id, sessionId: "shared", kind: .data, state: .running, priority: .default, description: nil,
                            request: request, owner: owner, now: Date(timeIntervalSince1970: 1_700_000_000))
    }

    private func changed(_ log: TaskChangeLog, after: Int) -> [Int] { log.changed(after: after).map(\.task) }

    @Test func eachTaskOnceAtItsLatestChangeInOrder() {
        var log = TaskChangeLog()
        for id in 1...3 { _ = log.note(task(id)) }
        _ = log.note(task(1))
        #expect(changed(log, after: 0) == [2, 3, 1])
        #expect(changed(log, after: 2) == [3, 1])
        #expect(changed(log, after: log.seq).isEmpty)
        #expect(log.stamp(of: 1) == 4 && log.stamp(of: 9) == 0)
    }

    @Test func compactionKeepsTheAnswers() {
        var log = TaskChangeLog()
        // 3 tasks changed about 2,500 times: far past the compaction threshold; task 3 deleted halfway.
        for round in 0..<1000 {
            for id in round > 500 ? [1, 2] : [3, 1, 2] { _ = log.note(task(id)) }
            if round == 500 { _ = log.remove(task(3)) }
        }
        #expect(changed(log, after: 0) == [1, 2])
        #expect(changed(log, after: log.seq - 1) == [2])
        #expect(log.removals.map(\.taskId) == [3])
    }

    @Test func removalsAreBoundedAndTheForgottenAreMarked() {
        var log = TaskChangeLog()
        let count = TaskChangeLog.removalCapacity + 10
        for id in 1...count {
            _ = log.note(task(id))
            _ = log.remove(task(id))
        }
        #expect(log.removals.count == TaskChangeLog.removalCapacity)
        #expect(log.removals.first?.taskId == 11)
        #expect(log.forgottenThrough == log.removals.first!.seq - 2)
        #expect(changed(log, after: 0).isEmpty)
    }

    @Test func waitersWakeOnlyForWhatTheirOwnerSees() {
        var log = TaskChangeLog()
        let alpha = log.add(TaskChangeLog.Waiter(owner: "alpha") {})
        _ = log.add(TaskChangeLog.Waiter(owner: "beta") {})
        #expect(log.note(task(1, owner: "beta")).map(\.owner) == ["beta"])
        #expect(log.waiterCount == 1)
        #expect(log.note(task(2, owner: nil)).map(\.owner) == ["alpha"])  // an ownerless task is everyone's
        #expect(log.take(id: alpha) == nil)  // already woken
        #expect(log.waiterCount == 0)
    }
}
