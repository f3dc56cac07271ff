internal import TransferModel

/// The daemon-wide change feed of tasks behind `GET /v1/tasks?after=`: a counter that every task
/// change advances, the counter value of each task's last change, the recent removals, and the
/// long-polls waiting for a change. A value type; `TransferService` holds it in `ServiceState`
/// under its lock and wakes the returned waiters after releasing it.
///
/// One client (the dashboard) follows every task it may see with one held request instead of one
/// progress long-poll per task, which a browser could not hold (six connections per host).
struct TaskChangeLog: Sendable {
    /// A held `GET /v1/tasks` long-poll: woken (not answered) by a change its owner may see, at
    /// its deadline or at shutdown; the wake reads the feed again and answers.
    struct Waiter: Sendable {
        let owner: String?
        let wake: @Sendable () -> Void
    }

    /// A task that was deleted, with the counter value of its deletion.
    struct Removal: Sendable {
        let seq: Int
        let taskId: Int
        let owner: String?
    }

    /// The counter: the stamp of the latest change.
    private(set) var seq = 0
    /// Each live task's stamp (the counter value of its last change).
    private(set) var stamps: [Int: Int] = [:]
    /// (stamp, task) in stamp order, so a poll reads only what changed after its cursor. An entry
    /// is current while the task's stamp still equals it; stale ones are dropped in bulk.
    private var order: [(seq: Int, task: Int)] = []
    /// Recent removals, oldest first, at most `removalCapacity`.
    private(set) var removals: [Removal] = []
    /// The stamp of the newest removal dropped from `removals`: a client whose cursor is older
    /// cannot be told about every removal and must start over (`resync`).
    private(set) var forgottenThrough = 0
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiterId = 0

    static let removalCapacity = 4096

    var waiterCount: Int { waiters.count }

    init() {}

    /// A feed that goes on above `floor`, every stamp an earlier run handed out: a cursor from
    /// that run is told to start over (`resync`), since its removals were not kept.
    init(after floor: Int) {
        seq = floor
        forgottenThrough = floor
    }

    /// Stops stamping a completed task that left memory: the store answers for it from now on,
    /// under the stamp of its last change (its row's `feed_seq`).
    mutating func forget(_ id: Int) {
        stamps[id] = nil
        compactIfNeeded()
    }

    /// Stamps a new or changed task; returns the waiters to wake (those who may see it).
    mutating func note(_ task: TransferTask) -> [Waiter] {
        seq += 1
        stamps[task.id] = seq
        order.append((seq, task.id))
        compactIfNeeded()
        return take { task.isVisible(to: $0.owner) }
    }

    /// Stamps a change to a task kept only in the store (its row takes the stamp); returns the
    /// waiters to wake.
    mutating func stampStored(_ task: TransferTask) -> (seq: Int, waiters: [Waiter]) {
        seq += 1
        return (seq, take { task.isVisible(to: $0.owner) })
    }

    /// Records a deleted task; returns the waiters to wake.
    mutating func remove(_ task: TransferTask) -> [Waiter] {
        seq += 1
        stamps[task.id] = nil
        compactIfNeeded()
        removals.append(Removal(seq: seq, taskId: task.id, owner: task.owner))
        if removals.count > Self.removalCapacity {
            let dropped = removals.count - Self.removalCapacity
            forgottenThrough = removals[dropped - 1].seq
            removals.removeFirst(dropped)
        }
        return take { task.isVisible(to: $0.owner) }
    }

    /// The stamp of a task (0 for one never stamped, which no cursor passes).
    func stamp(of task: Int) -> Int { stamps[task] ?? 0 }

    /// The live tasks whose last change is after `after`, oldest change first, with their stamps.
    func changed(after: Int) -> some Sequence<(seq: Int, task: Int)> {
        // Stamps ascend along `order`: binary search for the first one past the cursor.
        var low = 0, high = order.count
        while low < high {
            let middle = (low + high) / 2
            if order[middle].seq <= after { low = middle + 1 } else { high = middle }
        }
        return order[low...].lazy.filter { stamps[$0.task] == $0.seq }
    }

    /// Drops stale entries once they outnumber the live ones (amortised O(1) per change).
    private mutating func compactIfNeeded() {
        guard order.count > 2 * stamps.count + 1024 else { return }
        order.removeAll { stamps[$0.task] != $0.seq }
    }

    mutating func add(_ waiter: Waiter) -> Int {
        nextWaiterId += 1
        waiters[nextWaiterId] = waiter
        return nextWaiterId
    }

    /// Removes one waiter by id (its deadline passed); nil if it was woken already.
    mutating func take(id: Int) -> Waiter? { waiters.removeValue(forKey: id) }

    /// Removes every waiter (shutdown).
    mutating func takeAll() -> [Waiter] {
        defer { waiters = [:] }
        return Array(waiters.values)
    }

    private mutating func take(where wanted: (Waiter) -> Bool) -> [Waiter] {
        guard !waiters.isEmpty else { return [] }
        let ready = waiters.filter { wanted($0.value) }
        for id in ready.keys { waiters[id] = nil }
        return Array(ready.values)
    }
}
