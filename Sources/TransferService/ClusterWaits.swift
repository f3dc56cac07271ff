internal import Synchronization
internal import TransferStore

/// The long-polls a cluster node holds for what is in the store, not in its memory: a session's
/// feed (every node's events), and tasks this node does not run. Each waits for a signal
/// (`ClusterSignal`, by NOTIFY when another node's, or this node's, commit changed it) and then
/// reads the store again; a lost connection's `resync` wakes them all.
///
/// A waiter is taken exactly once, by the signal that wakes it or by its deadline, and whoever
/// takes it answers its long-poll: so a poll that registers before it reads (no signal can slip
/// between the read and the wait) and finds something at once answers only if it takes its own
/// waiter back.
final class ClusterWaits: Sendable {
    struct Waiter: Sendable {
        /// The task it waits for; nil for the session's feed.
        let task: Int?
        let wake: @Sendable () -> Void
    }

    private struct Table {
        var next = 0
        var bySession: [String: [Int: Waiter]] = [:]
        var sessionOf: [Int: String] = [:]

        /// Takes waiter `id` out, if it is still here.
        mutating func remove(_ id: Int) -> Waiter? {
            guard let session = sessionOf.removeValue(forKey: id) else { return nil }
            let waiter = bySession[session]?.removeValue(forKey: id)
            if bySession[session]?.isEmpty == true { bySession[session] = nil }
            return waiter
        }
    }

    private let table = Mutex(Table())

    /// The key of the change feed's polls (`GET /v1/tasks`): woken by a change to any task. A
    /// signal names a session, not an owner, so every such poll reads again on every commit of
    /// task rows; each answers only with what its token may see.
    static let everyTask = "*every task*"

    /// Registers a waiter; returns its id.
    func add(session: String, task: Int?, wake: @escaping @Sendable () -> Void) -> Int {
        table.withLock { t in
            t.next += 1
            t.bySession[session, default: [:]][t.next] = Waiter(task: task, wake: wake)
            t.sessionOf[t.next] = session
            return t.next
        }
    }

    /// Takes waiter `id` if nothing took it yet.
    func take(_ id: Int) -> Waiter? {
        table.withLock { $0.remove(id) }
    }

    /// Wakes the waiters `heard` concerns (all of them after a resync).
    func wake(_ heard: ClusterHeard) {
        let woken: [Waiter] = table.withLock { t in
            var ids: [Int] = []
            switch heard {
            case .resync:
                ids = Array(t.sessionOf.keys)
            case .signals(let signals):
                // The change feed's polls once per commit, however many of its tasks it wrote.
                var anyTask = false
                for signal in signals {
                    switch signal {
                    case .feed(let session):
                        ids += t.bySession[session]?.filter { $0.value.task == nil }.map(\.key) ?? []
                    case .task(let session, let task):
                        ids += t.bySession[session]?.filter { $0.value.task == task }.map(\.key) ?? []
                        anyTask = true
                    case .tasks(let session):
                        ids += t.bySession[session]?.filter { $0.value.task != nil }.map(\.key) ?? []
                        anyTask = true
                    case .command, .answer, .queue, .session, .setting:
                        break
                    }
                }
                if anyTask { ids += t.bySession[Self.everyTask].map { Array($0.keys) } ?? [] }
            }
            return ids.compactMap { t.remove($0) }
        }
        for waiter in woken { waiter.wake() }
    }

    /// Wakes every waiter (shutdown: each answers with what it has).
    func wakeAll() { wake(.resync) }

    /// How many long-polls wait here.
    var count: Int { table.withLock { $0.sessionOf.count } }
}
