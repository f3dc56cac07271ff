internal import Synchronization
internal import Dispatch

extension TransferService {
    /// Answers with the task's progress at once when its version is past `after`, otherwise holds
    /// until it is or `wait` seconds pass (then answers with the unchanged state). `answer` is
    /// called exactly once, from any thread; nothing blocks while waiting.
    public func progress(task id: Int, after: Int, wait: Double, owner: String?, answer: @escaping @Sendable (ProgressSnapshot) -> Void) throws {
        let wait = min(max(0, wait), configuration.maxLongPollWait)
        let immediate = try state.withLock { s throws -> ProgressSnapshot? in
            let entry = try visibleTask(s, id, owner)
            if entry.task.version > after || wait == 0 || !s.accepting { return ProgressSnapshot(entry.task) }
            let waiter = s.waiters.add(task: id, after: after, callback: answer)
            expire(waiter, after: wait)
            return nil
        }
        if let immediate { answer(immediate) }
    }

    /// Answers with the session's events after `after` at once when there are any, otherwise
    /// holds until one arrives or `wait` seconds pass.
    public func events(session id: String, after: Int, limit: Int, wait: Double, owner: String?, answer: @escaping @Sendable (EventPage) -> Void) throws {
        let wait = min(max(0, wait), configuration.maxLongPollWait)
        let immediate = try state.withLock { s throws -> EventPage? in
            _ = try visibleSession(s, id, owner)
            let page = EventPage(events: s.events[id]?.page(after: after, limit: limit) ?? [], next: 0).withNext(after: after)
            if !page.events.isEmpty || wait == 0 || !s.accepting { return page }
            let waiter = s.waiters.add(session: id, after: after, limit: limit, callback: answer)
            expire(waiter, after: wait)
            return nil
        }
        if let immediate { answer(immediate) }
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
                    let page = EventPage(events: s.events[session]?.page(after: w.after, limit: w.limit) ?? [], next: 0).withNext(after: w.after)
                    return { w.callback(page) }
                case nil:
                    return nil
                }
            }
            delivery?()
        }
    }
}
