internal import HeapModule

/// Running tasks that want more connections than the one they were admitted with (segmented
/// downloads, issue 18 item 2), the connections the scheduler granted each, and, per host, the
/// wanting tasks in admission order. Part of `Scheduler`, which decides when a host has a slot
/// to grant; a value type with no I/O.
///
/// A task says how many extra connections it wants to hold in all and on which hosts (its
/// source's and its mirrors'); what is still to grant is that minus what it holds. The heaps
/// use lazy deletion as the scheduler's do: a key is live while its task still wants more, may
/// use that host and has that key.
struct ConnectionWants: Sendable {
    struct Want: Sendable {
        var key: Scheduler.Key
        /// The hosts it may use now (a dropped mirror's host leaves the list).
        var usable: Set<Int>
        /// Every host it named: the scheduler keeps their bookkeeping until the task goes.
        var named: Set<Int>
        /// Extra connections it wants to hold in all.
        var wanted: Int
        /// Extra connections it holds, per host.
        var granted: [Int: Int] = [:]
        /// The hosts whose line holds its current key (so it is not put in twice).
        var inLine: Set<Int> = []

        var holding: Int { granted.values.reduce(0, +) }
        var outstanding: Int { max(0, wanted - holding) }
    }

    private(set) var wants: [Int: Want] = [:]
    private var byHost: [Int: Heap<Scheduler.Key>] = [:]

    var isEmpty: Bool { wants.isEmpty }
    /// Hosts some task waits for a connection to.
    var wantedHosts: [Int] { Array(byHost.keys) }
    /// Entries kept (tests: nothing leaks).
    var bookkeeping: Int { wants.count + byHost.count }

    /// Sets task `taskId`'s want; answers the hosts it names for the first time.
    mutating func set(_ taskId: Int, key: Scheduler.Key, hosts: [Int], wanted: Int) -> [Int] {
        var want = wants[taskId] ?? Want(key: key, usable: [], named: [], wanted: 0)
        let new = hosts.filter { !want.named.contains($0) }
        want.named.formUnion(hosts)
        want.usable = Set(hosts)
        want.wanted = max(0, wanted)
        if want.key != key { want.inLine = [] }
        want.key = key
        wants[taskId] = want
        queue(taskId)
        return new
    }

    /// The task's priority changed: its place in line moves with it.
    mutating func rekey(_ taskId: Int, _ key: Scheduler.Key) {
        guard wants[taskId] != nil else { return }
        wants[taskId]?.key = key
        wants[taskId]?.inLine = []
        queue(taskId)
    }

    /// One connection to `host` was granted to `taskId`.
    mutating func grant(_ taskId: Int, host: Int) {
        wants[taskId]?.granted[host, default: 0] += 1
    }

    /// The task gave back up to `count` connections to `host`; answers how many it held.
    mutating func giveBack(_ taskId: Int, host: Int, count: Int) -> Int {
        guard let held = wants[taskId]?.granted[host], held > 0 else { return 0 }
        let returned = min(held, count)
        wants[taskId]?.granted[host] = held - returned == 0 ? nil : held - returned
        queue(taskId)
        return returned
    }

    /// The task left: what it held and every host it named.
    mutating func remove(_ taskId: Int) -> Want? {
        wants.removeValue(forKey: taskId)
    }

    /// No task uses `host` any more: its line goes (its keys are all stale).
    mutating func forget(host: Int) {
        byHost[host] = nil
    }

    /// The first task in line for a connection to `host` (stale keys dropped on the way).
    mutating func first(for host: Int) -> Scheduler.Key? {
        while let key = byHost[host]?.min {
            if let want = wants[key.taskId], want.key == key, want.outstanding > 0, want.usable.contains(host) { return key }
            byHost[host]?.removeMin()
            if wants[key.taskId]?.key == key { wants[key.taskId]?.inLine.remove(host) }
            if byHost[host]?.isEmpty == true { byHost[host] = nil }
        }
        return nil
    }

    /// Puts the task in line at each host it may use and is not in line at, while it wants more.
    private mutating func queue(_ taskId: Int) {
        guard var want = wants[taskId], want.outstanding > 0 else { return }
        for host in want.usable.subtracting(want.inLine) { byHost[host, default: Heap()].insert(want.key) }
        want.inLine.formUnion(want.usable)
        wants[taskId] = want
    }
}
