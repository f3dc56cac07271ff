import Testing
@testable import TransferService

/// `GET /v1/queue` reads the scheduler's ordered listing (`OrderedKeys` per audience) a page at
/// a time: the same order and places a sort of every queued task gave, without the sort.
@Suite struct QueueListingTests {
    @Test func orderedKeysMatchASortedArrayThroughInsertsAndRemovals() {
        var keys = OrderedKeys<Int>()
        var model: [Int] = []
        var generator = SystemRandomNumberGenerator()
        // Enough keys for many chunks, with removals that empty some of them.
        for step in 0..<6_000 {
            if model.isEmpty || step % 3 != 2 {
                let key = Int.random(in: 0..<1_000_000, using: &generator)
                guard !model.contains(key) else { continue }
                keys.insert(key)
                model.insert(key, at: model.firstIndex { $0 > key } ?? model.count)
            } else {
                let key = model.remove(at: Int.random(in: 0..<model.count, using: &generator))
                let removed = keys.remove(key), again = keys.remove(key)
                #expect(removed)
                #expect(!again, "a key is removed once")
            }
        }
        #expect(keys.count == model.count)
        #expect(Array(keys.ascending) == model)
        for index in stride(from: 0, to: model.count, by: 97) {
            #expect(keys.rank(of: model[index]) == index)
            #expect(keys.rank(of: model[index] + 1) == index + 1 || model.contains(model[index] + 1))
        }
        #expect(keys.rank(of: -1) == 0)
        #expect(keys.rank(of: 2_000_000) == model.count)
        let absent = keys.remove(-5)
        #expect(!absent)
    }

    @Test func orderedKeysEmptiedChunksLeaveNothingBehind() {
        var keys = OrderedKeys<Int>()
        for key in 0..<2_000 { keys.insert(key) }  // in order: chunks fill up one after another
        #expect(Array(keys.ascending) == Array(0..<2_000))
        #expect(keys.rank(of: 1_500) == 1_500)
        keys.insert(-1)
        keys.insert(2_500)
        #expect(keys.rank(of: 1_500) == 1_501)
        let outer = keys.remove(-1) && keys.remove(2_500)
        #expect(outer)
        let removed = (0..<2_000).reversed().filter { keys.remove($0) }
        #expect(removed.count == 2_000)
        #expect(keys.isEmpty)
        #expect(Array(keys.ascending).isEmpty)
        keys.insert(7)
        #expect(Array(keys.ascending) == [7])
    }

    private func ticket(_ id: Int, _ priority: Double = 0.5, audience: String?) -> Scheduler.Ticket {
        Scheduler.Ticket(taskId: id, priority: priority, host: "s http://busy", hostLimit: 1, session: "s", audience: audience)
    }

    /// One running task holds the host; the rest queue behind it.
    private func queueBehindOne(_ audiences: [(Int, String?)]) -> Scheduler {
        var scheduler = Scheduler(maxConcurrent: 10)
        scheduler.enqueue(ticket(1, audience: nil))
        _ = scheduler.admit()
        for (id, audience) in audiences { scheduler.enqueue(ticket(id, audience: audience)) }
        _ = scheduler.admit()
        return scheduler
    }

    @Test func aTenantSeesItsOwnAndEveryonesTasksNumberedAmongThoseOnly() {
        let scheduler = queueBehindOne([(2, "a"), (3, "b"), (4, nil), (5, "a"), (6, "b"), (7, "a")])
        let page = scheduler.listing(requester: "a", everyone: false, limit: 10)
        #expect(page.total == 4)
        #expect(page.tasks.map(\.task.taskId) == [2, 4, 5, 7])
        #expect(page.tasks.map(\.position) == [1, 2, 3, 4])
        #expect(page.tasks.allSatisfy { $0.task.blockedBy == .hostCap })
        let first = scheduler.listing(requester: "a", everyone: false, limit: 2)
        #expect(first.total == 4)
        #expect(first.tasks.map(\.task.taskId) == [2, 4])
        // Without tokens every task is everyone's.
        let anonymous = scheduler.listing(requester: nil, everyone: false, limit: 10)
        #expect(anonymous.tasks.map(\.task.taskId) == [4])
        #expect(scheduler.listing(requester: "nobody", everyone: false, limit: 10).tasks.map(\.task.taskId) == [4])
    }

    @Test func anAdminsPlacesAndTotalCountEveryQueuedTask() {
        let scheduler = queueBehindOne([(2, "a"), (3, "admin"), (4, nil), (5, "b"), (6, "admin")])
        let page = scheduler.listing(requester: "admin", everyone: true, limit: 10)
        #expect(page.total == 5)
        #expect(page.tasks.map(\.task.taskId) == [3, 4, 6])
        #expect(page.tasks.map(\.position) == [2, 3, 5])
        #expect(scheduler.queue().map(\.taskId) == [2, 3, 4, 5, 6])
    }

    @Test func aNewPriorityMovesATaskInTheListingAndLeavingTakesItOut() {
        var scheduler = queueBehindOne([(2, "a"), (3, "a"), (4, "a")])
        scheduler.reprioritise(taskId: 4, priority: 0.9)
        #expect(scheduler.listing(requester: "a", everyone: false, limit: 10).tasks.map(\.task.taskId) == [4, 2, 3])
        scheduler.reprioritise(taskId: 4, priority: 0.5)
        #expect(scheduler.listing(requester: "a", everyone: false, limit: 10).tasks.map(\.task.taskId) == [2, 3, 4])
        scheduler.remove(taskId: 3)
        #expect(scheduler.listing(requester: "a", everyone: false, limit: 10).tasks.map(\.task.taskId) == [2, 4])
        // The running task ends: the first queued one starts and leaves the listing.
        scheduler.remove(taskId: 1)
        #expect(scheduler.admit() == [.start(2)])
        let page = scheduler.listing(requester: "a", everyone: true, limit: 10)
        #expect(page.tasks.map(\.task.taskId) == [4])
        #expect(page.tasks.map(\.position) == [1])
        #expect(page.total == 1)
        scheduler.remove(taskId: 4)
        scheduler.remove(taskId: 2)
        #expect(scheduler.bookkeeping.hosts == 0 && scheduler.bookkeeping.sessions == 0, "nothing is kept for audiences that left")
    }
}
