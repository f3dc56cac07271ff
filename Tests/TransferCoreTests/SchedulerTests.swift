import Testing
@testable import TransferCore

/// `Scheduler`: admission by global cap, per-host cap, priority and arrival order.
@Suite struct SchedulerTests {
    @Test func globalCapAdmitsOnlyThatManyAcrossHosts() {
        var scheduler = Scheduler(maxConcurrent: 2)
        for id in 1...5 { scheduler.enqueue(taskId: id, priority: 0.5, host: "h\(id)", hostLimit: 6) }
        #expect(scheduler.admit() == [1, 2])
        #expect(scheduler.admit() == [])
        #expect(scheduler.running.count == 2)
        #expect(scheduler.queue.map(\.taskId) == [3, 4, 5])
    }

    @Test func perHostCapSkipsAFullHostButAdmitsOthers() {
        var scheduler = Scheduler(maxConcurrent: 10)
        for id in 1...4 { scheduler.enqueue(taskId: id, priority: 0.5, host: "a", hostLimit: 2) }
        scheduler.enqueue(taskId: 5, priority: 0.5, host: "b", hostLimit: 2)
        #expect(scheduler.admit() == [1, 2, 5])
        #expect(scheduler.isQueued(3) && scheduler.isQueued(4))
        scheduler.remove(taskId: 1)
        #expect(scheduler.admit() == [3])
        scheduler.remove(taskId: 5)  // frees host b, which has nothing queued
        #expect(scheduler.admit() == [])
    }

    @Test func higherPriorityIsAdmittedFirst() {
        var scheduler = Scheduler(maxConcurrent: 1)
        scheduler.enqueue(taskId: 1, priority: 0.25, host: "h", hostLimit: 6)
        scheduler.enqueue(taskId: 2, priority: 0.75, host: "h", hostLimit: 6)
        scheduler.enqueue(taskId: 3, priority: 0.5, host: "h", hostLimit: 6)
        scheduler.enqueue(taskId: 4, priority: 1.0, host: "h", hostLimit: 6)
        var order: [Int] = []
        while let next = scheduler.admit().first {
            order.append(next)
            scheduler.remove(taskId: next)
        }
        #expect(order == [4, 2, 3, 1])
    }

    @Test func equalPriorityIsFirstComeFirstServedNotByID() {
        var scheduler = Scheduler(maxConcurrent: 1)
        for id in [9, 3, 7, 1] { scheduler.enqueue(taskId: id, priority: 0.5, host: "h", hostLimit: 6) }
        var order: [Int] = []
        while let next = scheduler.admit().first {
            order.append(next)
            scheduler.remove(taskId: next)
        }
        #expect(order == [9, 3, 7, 1])
    }

    @Test func reprioritiseMovesAQueuedTaskAtOnce() {
        var scheduler = Scheduler(maxConcurrent: 1)
        for id in 1...4 { scheduler.enqueue(taskId: id, priority: 0.25, host: "h", hostLimit: 6) }
        #expect(scheduler.admit() == [1])
        scheduler.reprioritise(taskId: 4, priority: 0.75)
        #expect(scheduler.queue.map(\.taskId) == [4, 2, 3])
        scheduler.reprioritise(taskId: 2, priority: 0.1)
        #expect(scheduler.queue.map(\.taskId) == [4, 3, 2])
        // Back to the old priority, it takes its old place by arrival order.
        scheduler.reprioritise(taskId: 2, priority: 0.25)
        #expect(scheduler.queue.map(\.taskId) == [4, 2, 3])
        // A running task keeps its slot; reprioritising it changes nothing.
        scheduler.reprioritise(taskId: 1, priority: 1)
        #expect(scheduler.running.keys.sorted() == [1])
        #expect(scheduler.admit() == [])
        scheduler.remove(taskId: 1)
        #expect(scheduler.admit() == [4])
    }

    @Test func removingARunningTaskFreesItsGlobalAndHostSlot() {
        var scheduler = Scheduler(maxConcurrent: 1)
        scheduler.enqueue(taskId: 1, priority: 0.5, host: "h", hostLimit: 1)
        scheduler.enqueue(taskId: 2, priority: 0.5, host: "h", hostLimit: 1)
        #expect(scheduler.admit() == [1])
        #expect(scheduler.admit() == [])
        scheduler.remove(taskId: 1)
        #expect(scheduler.running.isEmpty)
        #expect(scheduler.admit() == [2])
    }

    @Test func removingAQueuedTaskMeansItIsNeverAdmitted() {
        var scheduler = Scheduler(maxConcurrent: 4)
        scheduler.enqueue(taskId: 1, priority: 0.5, host: "h", hostLimit: 6)
        scheduler.enqueue(taskId: 2, priority: 0.5, host: "h", hostLimit: 6)
        scheduler.remove(taskId: 1)
        #expect(!scheduler.isQueued(1))
        #expect(scheduler.admit() == [2])
    }

    @Test func enqueueTwiceOrWhileRunningIsIgnored() {
        var scheduler = Scheduler(maxConcurrent: 4)
        scheduler.enqueue(taskId: 1, priority: 0.5, host: "h", hostLimit: 6)
        scheduler.enqueue(taskId: 1, priority: 0.9, host: "h", hostLimit: 6)
        #expect(scheduler.queue.count == 1)
        #expect(scheduler.admit() == [1])
        scheduler.enqueue(taskId: 1, priority: 0.5, host: "h", hostLimit: 6)
        #expect(scheduler.queue.isEmpty)
    }

    @Test func capsBelowOneAreOne() {
        var scheduler = Scheduler(maxConcurrent: 0)
        #expect(scheduler.maxConcurrent == 1)
        scheduler.enqueue(taskId: 1, priority: 0.5, host: "a", hostLimit: 0)
        scheduler.enqueue(taskId: 2, priority: 0.5, host: "b", hostLimit: -3)
        #expect(scheduler.admit() == [1])
        #expect(scheduler.queue.first?.hostLimit == 1)
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
