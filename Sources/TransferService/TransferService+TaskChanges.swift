internal import Synchronization
internal import Dispatch
public import TransferModel
internal import TransferStore

extension TransferService {
    /// Answers with the visible tasks changed after `after` (at most `limit`, oldest change first)
    /// at once when there are any, otherwise holds until one changes or `wait` seconds pass.
    /// `after=0` lists every visible task. `answer` is called exactly once, from any thread.
    ///
    /// The page merges the held tasks' stamps with the completed tasks that left memory, read
    /// from the store by the stamp of their last change (after the held ones, so a task that
    /// leaves in between is in one of the two). A poll is held only if nothing was stamped
    /// between that read and the hold.
    ///
    /// In a cluster the feed is the store's, every node's changes in commit order (`clusterTaskChanges`).
    public func taskChanges(after: Int, limit: Int, wait: Double, owner: String?, answer: @escaping @Sendable (TaskChangePage) -> Void) {
        let wait = min(max(0, wait), configuration.maxLongPollWait)
        let deadline = ContinuousClock.now + .milliseconds(Int64(wait * 1000))
        if isClustered { return clusterTaskChanges(after: after, limit: limit, deadline: deadline, owner: owner, answer: answer) }
        while true {
            let (held, accepting) = state.withLock { s in (heldChanges(s, after: after, limit: limit, owner: owner), s.accepting) }
            let page = withStoredChanges(held, after: after, limit: limit, owner: owner)
            if !page.tasks.isEmpty || !page.removed.isEmpty || page.resync || wait == 0 || !accepting {
                // A completion is reported once durable (as the progress long-poll does), without
                // blocking the thread that woke us (possibly the engine's).
                if page.tasks.contains(where: \.isHeldCompletion) {
                    store.afterCommit { answer(page) }
                } else {
                    answer(page)
                }
                return
            }
            let holding = state.withLock { s -> Bool in
                guard s.taskChanges.seq == held.through, s.accepting else { return false }  // changed meanwhile: read again
                // Woken by a change this client may see (or the deadline, or shutdown): read again
                // from the cursor with the time left.
                let waiter = s.taskChanges.add(TaskChangeLog.Waiter(owner: owner) { [weak self] in
                    guard let self else { return answer(page) }
                    let left = deadline - ContinuousClock.now
                    let seconds = max(0, Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
                    taskChanges(after: page.next, limit: limit, wait: seconds, owner: owner, answer: answer)
                })
                DispatchQueue.global().asyncAfter(deadline: .now() + wait) { [weak self] in
                    self?.state.withLock { $0.taskChanges.take(id: waiter) }?.wake()
                }
                return true
            }
            if holding { return }
        }
    }

    /// Stamps a new or changed task in the change feed and wakes the feed's waiters that may see it.
    func noteTaskChange(_ s: inout ServiceState, task: TransferTask, _ deliveries: inout Deliveries) {
        for waiter in s.taskChanges.note(task) { deliveries.add(waiter.wake) }
        reserveFeedStamps(&s)
        if countsUsageHere(s, task) { s.usage.note(task) }  // every change passes here: the tenant's quota counts follow
    }

    /// Records a deleted task in the change feed and wakes the waiters that may see it.
    func noteTaskRemoval(_ s: inout ServiceState, task: TransferTask, _ deliveries: inout Deliveries) {
        for waiter in s.taskChanges.remove(task) { deliveries.add(waiter.wake) }
        s.usage.remove(task)
    }

    /// Wakes every held change-feed poll (shutdown: each then answers at once).
    func wakeAllTaskChangeWaiters() {
        for waiter in state.withLock({ $0.taskChanges.takeAll() }) { waiter.wake() }
    }

    /// The held tasks' part of a page: what changed after `after` up to `through` (the feed's
    /// counter, or the stamp of the `limit`-th one), the removals in that range, and whether the
    /// client must start over.
    struct HeldChanges: Sendable {
        var tasks: [(seq: Int, task: TransferTask)]
        var through: Int
        var removals: [(seq: Int, taskId: Int)]
        var resync: Bool
    }

    private func heldChanges(_ s: ServiceState, after: Int, limit: Int, owner: String?) -> HeldChanges {
        let log = s.taskChanges
        // Only what changed after the cursor is read (all tasks from 0), oldest change first.
        var tasks: [(seq: Int, task: TransferTask)] = []
        var through = log.seq
        for (seq, id) in log.changed(after: after) {
            guard let entry = s.tasks[id], entry.task.isVisible(to: owner),
                  s.sessions[entry.task.sessionId]?.isVisible(to: owner) == true else { continue }
            if tasks.count == limit {
                through = tasks[limit - 1].seq  // more to come: continue after the last one answered
                break
            }
            tasks.append((seq, entry.task))
        }
        let removals = log.removals.filter { $0.seq > after && $0.seq <= through && Self.sees(owner, $0.owner) }.map { (seq: $0.seq, taskId: $0.taskId) }
        return HeldChanges(tasks: tasks, through: through, removals: removals,
                           resync: after > log.seq || (after > 0 && after < log.forgottenThrough))
    }

    /// Merges the stored completed tasks stamped in the held part's range into it, and cuts the
    /// page at `limit` changes. A store that cannot be read leaves the held part alone.
    private func withStoredChanges(_ held: HeldChanges, after: Int, limit: Int, owner: String?) -> TaskChangePage {
        var through = held.through
        let heldIds = Set(held.tasks.map(\.task.id))
        var changes = held.tasks.map { (seq: $0.seq, task: ServedTask.held($0.task)) }
        do {
            let stored = try store.completedChanges(after: after, through: through, owner: owner, limit: limit)
            // The store's answer was cut at `limit`: what lies past its last row is not known.
            if stored.count == limit, let last = stored.last { through = min(through, last.seq) }
            changes += stored.filter { !heldIds.contains($0.task.id) }.map { (seq: $0.seq, task: ServedTask.stored($0.task)) }
        } catch {
            // The held part alone, and a cursor that does not move: the stored changes in the
            // range are read again next time instead of being skipped for good.
            return TaskChangePage(tasks: changes.map(\.task), removed: [], next: after, resync: held.resync)
        }
        changes = changes.filter { $0.seq <= through }.sorted { $0.seq < $1.seq }
        if changes.count > limit {
            changes.removeLast(changes.count - limit)
            through = changes[limit - 1].seq
        }
        let visible = state.withLock { s in
            changes.filter { change in s.tasks.contains(change.task.id) || s.sessions[change.task.sessionId]?.isVisible(to: owner) == true }
        }
        return TaskChangePage(tasks: visible.map(\.task), removed: held.removals.filter { $0.seq <= through }.map(\.taskId),
                              next: through, resync: held.resync)
    }

    private static func sees(_ requester: String?, _ owner: String?) -> Bool { owner == nil || owner == requester }
}
