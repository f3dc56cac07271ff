internal import Dispatch
internal import FoundationEssentials
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// Long-polls in a cluster (docs/cluster.md, step 5): a session's feed holds every node's
/// events, so it is read from the store, where each session's events are numbered in commit
/// order; a task another node runs is read from its row, as fresh as that node's last
/// checkpoint. A held poll waits for the signal of a commit that concerns it (`ClusterWaits`)
/// and reads again. A task this node runs, and an ephemeral session (never stored), are
/// answered from memory as by a daemon alone.
extension TransferService {
    /// Whether a session's feed is read from the store: a recorded session in a cluster.
    func feedIsShared(session id: String) -> Bool {
        isClustered && state.withLock { isRecorded($0, session: id) }
    }

    /// The events long-poll on the store. `first` throws to the client (404, 503); a poll woken
    /// later answers whatever happens.
    func sharedFeedEvents(
        session id: String, after: Int, limit: Int, deadline: ContinuousClock.Instant, owner: String?, filter: EventFilter,
        first: Bool, answer: @escaping @Sendable (EventPage) -> Void
    ) throws {
        guard let coordinator = store.coordinator, let work = clusterWork else { return answer(EventPage(events: [], next: after)) }
        // Registered before the read: a commit that lands between the two still wakes it.
        let waiter = work.waits.add(session: id, task: nil) { [weak self] in
            guard let self else { return answer(EventPage(events: [], next: after)) }
            do {
                try sharedFeedEvents(session: id, after: after, limit: limit, deadline: deadline, owner: owner, filter: filter, first: false, answer: answer)
            } catch {
                answer(EventPage(events: [], next: after))
            }
        }
        let page: EventPage
        do {
            let accepting = try state.withLock { s throws -> Bool in
                _ = try visibleSession(s, id, owner)
                return s.accepting
            }
            page = Self.visiblePage(try coordinator.events(session: id, after: after, limit: limit), after: after, limit: limit, owner: owner, filter: filter)
            if !page.events.isEmpty || ContinuousClock.now >= deadline || !accepting {
                if work.waits.take(waiter) != nil { answer(page) }
                return
            }
        } catch {
            // Only the poll that still holds its waiter answers (with the error, when first).
            guard work.waits.take(waiter) != nil else { return }
            if first { throw error }
            return answer(EventPage(events: [], next: after))
        }
        let left = deadline - ContinuousClock.now
        DispatchQueue.global().asyncAfter(deadline: .now() + left.seconds) {
            if work.waits.take(waiter) != nil { answer(page) }
        }
    }

    /// The progress long-poll on a task this node does not hold, read from its row. Woken by
    /// the signal of a commit of its row; when this node has taken the task meanwhile, memory
    /// answers (`progress`).
    func storedTaskProgress(
        task id: Int, after: Int, deadline: ContinuousClock.Instant, owner: String?, first: Bool,
        answer: @escaping @Sendable (ProgressSnapshot) -> Void
    ) throws {
        let stored = try visibleRecord(id, owner: owner).task
        guard let work = clusterWork, stored.version <= after, ContinuousClock.now < deadline, stored.state != .completed,
              state.withLock({ $0.accepting }) else {
            return answer(ProgressSnapshot(stored))
        }
        let again: @Sendable () -> Void = { [weak self] in
            guard let self else { return answer(ProgressSnapshot(stored)) }
            let left = deadline - ContinuousClock.now
            do {
                try progress(task: id, after: after, wait: max(0, left.seconds), owner: owner, answer: answer)
            } catch {
                answer(ProgressSnapshot(stored))
            }
        }
        let waiter = work.waits.add(session: stored.sessionId, task: id, wake: again)
        // Read again now that it waits: a commit between the first read and the wait is not missed.
        let newer = try? store.storedTask(id: id)?.task
        if let newer, newer.version > after || newer.state == .completed || state.withLock({ $0.tasks.contains(id) }) {
            if work.waits.take(waiter) != nil { again() }
            return
        }
        let left = deadline - ContinuousClock.now
        DispatchQueue.global().asyncAfter(deadline: .now() + left.seconds) {
            if work.waits.take(waiter) != nil { answer(ProgressSnapshot(newer ?? stored)) }
        }
    }
}

extension TransferService {
    /// The change feed of tasks (`GET /v1/tasks?after=`) on the store: every node's changes to
    /// the rows the caller may see, in commit order (`ClusterTaskFeed`), as fresh as each
    /// node's last checkpoint of the tasks it runs. Held like the events poll: registered before
    /// it reads, woken by a commit of task rows. Changes committed behind an older transaction
    /// still running are read again after `behindRetry` (no signal comes when it ends). A store
    /// that cannot be read answers nothing new, the cursor unmoved. An ephemeral session's tasks
    /// (never stored, on one node) are not in this feed; their progress long-poll follows them.
    func clusterTaskChanges(
        after: Int, limit: Int, deadline: ContinuousClock.Instant, owner: String?, answer: @escaping @Sendable (TaskChangePage) -> Void
    ) {
        let unchanged = TaskChangePage(tasks: [], removed: [], next: after, resync: false)
        guard let coordinator = store.coordinator, let work = clusterWork else { return answer(unchanged) }
        let waiter = work.waits.add(session: ClusterWaits.everyTask, task: nil) { [weak self] in
            guard let self else { return answer(unchanged) }
            clusterTaskChanges(after: after, limit: limit, deadline: deadline, owner: owner, answer: answer)
        }
        let stored: StoredTaskChanges
        do {
            stored = try coordinator.taskChanges(after: after, limit: limit, owner: owner)
        } catch {
            logger.warning("the change feed cannot be read from the store", metadata: ["error": "\(error)"])
            // Read again shortly, until the deadline: a held poll answered at once with nothing
            // would have its client ask again at once, and a woken one would lose its wait.
            let retry = min(Self.readRetry, max(0, (deadline - ContinuousClock.now).seconds))
            DispatchQueue.global().asyncAfter(deadline: .now() + retry) { [weak self] in
                guard work.waits.take(waiter) != nil else { return }
                guard let self, ContinuousClock.now < deadline else { return answer(unchanged) }
                clusterTaskChanges(after: after, limit: limit, deadline: deadline, owner: owner, answer: answer)
            }
            return
        }
        let page = TaskChangePage(tasks: stored.tasks.map(ServedTask.stored), removed: stored.removed, next: stored.next, resync: stored.resync)
        if !page.tasks.isEmpty || !page.removed.isEmpty || page.resync || ContinuousClock.now >= deadline || !state.withLock({ $0.accepting }) {
            if work.waits.take(waiter) != nil { answer(page) }
            return
        }
        if stored.behind {
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.behindRetry) { [weak self] in
                guard work.waits.take(waiter) != nil else { return }
                guard let self else { return answer(page) }
                clusterTaskChanges(after: page.next, limit: limit, deadline: deadline, owner: owner, answer: answer)
            }
        }
        let left = deadline - ContinuousClock.now
        DispatchQueue.global().asyncAfter(deadline: .now() + left.seconds) {
            if work.waits.take(waiter) != nil { answer(page) }
        }
    }

    /// How soon a change-feed poll reads again when changes wait behind an older transaction.
    static let behindRetry = 0.02
    /// How soon a held change-feed poll reads again after the store failed to answer.
    static let readRetry = 0.25
}

extension Duration {
    /// In seconds, as a Double.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
