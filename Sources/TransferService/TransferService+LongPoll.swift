internal import Synchronization
internal import Dispatch
public import TransferModel
internal import TransferStore

extension TransferService {
    /// Answers with the task's progress at once when its version is past `after`, otherwise holds
    /// until it is or `wait` seconds pass (then answers with the unchanged state). `answer` is
    /// called exactly once, from any thread; nothing blocks while waiting.
    public func progress(task id: Int, after: Int, wait: Double, owner: String?, answer: @escaping @Sendable (ProgressSnapshot) -> Void) throws {
        let wait = min(max(0, wait), configuration.maxLongPollWait)
        enum Start { case now(ProgressSnapshot), waiting, notHeld }
        let start = try state.withLock { s throws -> Start in
            // One that left memory has completed: its last state is read from the store below.
            guard s.tasks.contains(id) else { return .notHeld }
            let entry = try visibleTask(s, id, owner)
            if entry.task.version > after || wait == 0 || !s.accepting { return .now(ProgressSnapshot(entry.task)) }
            let waiter = s.waiters.add(task: id, after: after, callback: answer)
            expire(waiter, after: wait)
            return .waiting
        }
        switch start {
        case .now(let snapshot):
            if snapshot.state == .completed { store.flush() }  // a completion is reported once durable
            answer(snapshot)
        case .notHeld where isClustered:
            // Queued, or another node's: its row, woken by the commits that change it.
            let deadline = ContinuousClock.now + .milliseconds(Int64(wait * 1000))
            try storedTaskProgress(task: id, after: after, deadline: deadline, owner: owner, first: true, answer: answer)
        case .notHeld:
            answer(ProgressSnapshot(try visibleRecord(id, owner: owner).task))
        case .waiting:
            break
        }
    }

    /// Answers with the session's events after `after` at once when there are any, otherwise
    /// holds until one arrives or `wait` seconds pass. Events of tasks the client may not see
    /// (other tokens' tasks in the shared session) are skipped, and do not end the wait; so are
    /// the events `filter` leaves out.
    public func events(
        session id: String, after: Int, limit: Int, wait: Double, owner: String?, filter: EventFilter = EventFilter(),
        answer: @escaping @Sendable (EventPage) -> Void
    ) throws {
        let wait = min(max(0, wait), configuration.maxLongPollWait)
        let deadline = ContinuousClock.now + .milliseconds(Int64(wait * 1000))
        try learnSession(id)
        if feedIsShared(session: id) {
            // Every node's events: read from the store, woken by the commits that add to it.
            return try sharedFeedEvents(session: id, after: after, limit: limit, deadline: deadline, owner: owner, filter: filter, first: true, answer: answer)
        }
        let (immediate, recorded) = try state.withLock { s throws -> (EventPage?, Bool) in
            _ = try visibleSession(s, id, owner)
            let page = visibleEvents(s, session: id, after: after, limit: limit, owner: owner, filter: filter)
            if !page.events.isEmpty || wait == 0 || !s.accepting { return (page, isRecorded(s, session: id)) }
            // Woken by a new event (or the deadline, or shutdown): read again from the cursor with
            // the time left, which answers at once unless every new event is invisible to this client.
            let waiter = s.waiters.add(session: id, after: page.next, limit: limit, filter: filter, owner: owner) { [weak self] woken in
                guard let self else { return answer(woken) }
                let left = deadline - ContinuousClock.now
                let seconds = max(0, Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
                do {
                    try events(session: id, after: page.next, limit: limit, wait: seconds, owner: owner, filter: filter, answer: answer)
                } catch {
                    answer(EventPage(events: [], next: page.next))
                }
            }
            expire(waiter, after: wait)
            return (nil, false)
        }
        guard let immediate else { return }
        // An event is served only once it is committed, never from memory ahead of the disk: a
        // client must not see (and acknowledge past) an event a kill -9 then takes back.
        // Asynchronous, so a delivery on the engine thread never waits for the disk.
        if recorded { store.afterCommit { answer(immediate) } } else { answer(immediate) }
    }

    /// Up to `limit` events after `after` that `owner` may see and `filter` reads; `next` is the
    /// last one answered, or past the skipped ones read, or `after`.
    func visibleEvents(_ s: ServiceState, session: String, after: Int, limit: Int, owner: String?, filter: EventFilter = EventFilter()) -> EventPage {
        guard let log = s.events[session] else { return EventPage(events: [], next: after) }
        // Read in place: a copy of everything after the cursor, under the service's lock, took
        // milliseconds per poll while a client caught up on a long feed.
        return Self.visiblePage(log.events(after: after), after: after, limit: limit, owner: owner, filter: filter)
    }

    /// Of events after `after`, the page `owner` may see and `filter` reads: up to `limit`
    /// events; `next` is the last one answered, or past the skipped ones read, or `after`.
    static func visiblePage(_ read: some Sequence<TaskEvent>, after: Int, limit: Int, owner: String?, filter: EventFilter) -> EventPage {
        var events: [TaskEvent] = []
        var next = after
        for event in read {
            // By the owner the event carries: its task may have left memory, or been deleted.
            let visible = event.taskId == nil || event.owner == nil || event.owner == owner
            if !visible || !filter.reads(event) {
                next = event.seq
                continue
            }
            guard events.count < limit else { break }
            events.append(event)
            next = event.seq
        }
        return EventPage(events: events, next: next)
    }

    /// What a held events poll is answered with when woken, at its deadline or at shutdown.
    func visibleEvents(_ s: ServiceState, waiting w: Waiters.EventsWaiter, in session: String) -> EventPage {
        visibleEvents(s, session: session, after: w.after, limit: w.limit, owner: w.owner, filter: w.filter)
    }

    /// At the deadline, answers the waiter with the current state if nothing answered it first.
    private func expire(_ waiter: Int, after seconds: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self else { return }
            let delivery: (@Sendable () -> Void)? = state.withLock { s in
                switch s.waiters.take(id: waiter) {
                case .progress(let task, let w)?:
                    guard let entry = s.tasks[task] else { return nil }
                    let snapshot = ProgressSnapshot(entry.task)
                    return { w.callback(snapshot) }
                case .events(let session, let w)?:
                    let page = visibleEvents(s, waiting: w, in: session)
                    return { w.callback(page) }
                case nil:
                    return nil
                }
            }
            delivery?()
        }
    }
}
