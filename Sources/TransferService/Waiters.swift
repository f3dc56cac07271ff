internal import TransferModel

/// Held long-polls: who waits for which task's version or session's event cursor. Each waiter is
/// answered exactly once, by a change, by its deadline, or at shutdown. A value type; the
/// service holds it under its lock and calls the callbacks after releasing the lock.
struct Waiters: Sendable {
    typealias ProgressCallback = @Sendable (ProgressSnapshot) -> Void
    typealias EventsCallback = @Sendable (EventPage) -> Void

    struct ProgressWaiter: HeldPoll { let id: Int; let after: Int; let callback: ProgressCallback }
    struct EventsWaiter: HeldPoll {
        let id: Int
        let after: Int
        let limit: Int
        /// Which events the poll reads: the others neither answer nor wake it.
        let filter: EventFilter
        /// The token whose tasks' events it may read (nil: every task's).
        let owner: String?
        let callback: EventsCallback
    }

    enum Key: Sendable, Hashable { case task(Int), session(String) }

    private(set) var progress: [Int: [ProgressWaiter]] = [:]
    private(set) var events: [String: [EventsWaiter]] = [:]
    private var keys: [Int: Key] = [:]
    private var nextId = 0

    var count: Int { keys.count }

    mutating func add(task: Int, after: Int, callback: @escaping ProgressCallback) -> Int {
        nextId += 1
        progress[task, default: []].append(ProgressWaiter(id: nextId, after: after, callback: callback))
        keys[nextId] = .task(task)
        return nextId
    }

    mutating func add(
        session: String, after: Int, limit: Int, filter: EventFilter = EventFilter(), owner: String? = nil,
        callback: @escaping EventsCallback
    ) -> Int {
        nextId += 1
        events[session, default: []].append(EventsWaiter(id: nextId, after: after, limit: limit, filter: filter, owner: owner, callback: callback))
        keys[nextId] = .session(session)
        return nextId
    }

    /// Removes and returns the task's waiters whose cursor is below `version`.
    mutating func takeProgress(task: Int, below version: Int) -> [ProgressWaiter] {
        Self.take(from: &progress, key: task, below: version, ids: &keys)
    }

    /// Removes and returns the session's waiters whose cursor is below `event`'s seq and that
    /// read it.
    mutating func takeEvents(session: String, for event: TaskEvent) -> [EventsWaiter] {
        Self.take(from: &events, key: session, below: event.seq, ids: &keys) { waiter in
            waiter.filter.reads(event)
        }
    }

    private static func take<Key: Hashable, Waiter: HeldPoll>(
        from table: inout [Key: [Waiter]], key: Key, below cursor: Int, ids: inout [Int: Waiters.Key],
        where wanted: (Waiter) -> Bool = { _ in true }
    ) -> [Waiter] {
        guard let list = table[key] else { return [] }
        func isReady(_ waiter: Waiter) -> Bool { waiter.after < cursor && wanted(waiter) }
        let ready = list.filter(isReady)
        guard !ready.isEmpty else { return [] }
        let rest = list.filter { !isReady($0) }
        table[key] = rest.isEmpty ? nil : rest
        for waiter in ready { ids[waiter.id] = nil }
        return ready
    }

    /// A waiter taken out by id.
    enum Taken: Sendable {
        case progress(task: Int, ProgressWaiter)
        case events(session: String, EventsWaiter)
    }

    /// Removes one waiter by id (its deadline passed); nil if it was answered already.
    mutating func take(id: Int) -> Taken? {
        guard let key = keys.removeValue(forKey: id) else { return nil }
        switch key {
        case .task(let task):
            guard let index = progress[task]?.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = progress[task]!.remove(at: index)
            if progress[task]!.isEmpty { progress[task] = nil }
            return .progress(task: task, waiter)
        case .session(let session):
            guard let index = events[session]?.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = events[session]!.remove(at: index)
            if events[session]!.isEmpty { events[session] = nil }
            return .events(session: session, waiter)
        }
    }

    /// Removes every waiter (shutdown).
    mutating func takeAll() -> (progress: [Int: [ProgressWaiter]], events: [String: [EventsWaiter]]) {
        defer { progress = [:]; events = [:]; keys = [:] }
        return (progress, events)
    }
}

/// A held long-poll: its id and the cursor it waits to pass.
protocol HeldPoll: Sendable {
    var id: Int { get }
    var after: Int { get }
}
