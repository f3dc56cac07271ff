internal import Synchronization
internal import Dispatch
public import TransferModel
internal import TransferStore

extension TransferService {
    /// Answers with the visible tasks changed after `after` (at most `limit`, oldest change first)
    /// at once when there are any, otherwise holds until one changes or `wait` seconds pass.
    /// `after=0` lists every visible task. `answer` is called exactly once, from any thread.
    public func taskChanges(after: Int, limit: Int, wait: Double, owner: String?, answer: @escaping @Sendable (TaskChangePage) -> Void) {
        let wait = min(max(0, wait), configuration.maxLongPollWait)
        let deadline = ContinuousClock.now + .milliseconds(Int64(wait * 1000))
        let immediate = state.withLock { s -> TaskChangePage? in
            let page = changePage(s, after: after, limit: limit, owner: owner)
            if !page.tasks.isEmpty || !page.removed.isEmpty || page.resync || wait == 0 || !s.accepting { return page }
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
            return nil
        }
        guard let immediate else { return }
        // A completion is reported once durable (as the progress long-poll does), without
        // blocking the thread that woke us (possibly the engine's).
        if immediate.tasks.contains(where: { $0.state == .completed }) {
            store.afterCommit { answer(immediate) }
        } else {
            answer(immediate)
        }
    }

    /// Stamps a new or changed task in the change feed and wakes the feed's waiters that may see it.
    func noteTaskChange(_ s: inout ServiceState, task: TransferTask, _ deliveries: inout Deliveries) {
        for waiter in s.taskChanges.note(task) { deliveries.add(waiter.wake) }
        s.usage.note(task)  // every change passes here: the tenant's quota counts follow
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

    private func changePage(_ s: ServiceState, after: Int, limit: Int, owner: String?) -> TaskChangePage {
        let log = s.taskChanges
        // Only what changed after the cursor is read (all tasks from 0), oldest change first.
        var tasks: [TransferTask] = []
        var next = log.seq
        for (_, id) in log.changed(after: after) {
            guard let entry = s.tasks[id], entry.task.isVisible(to: owner),
                  s.sessions[entry.task.sessionId]?.isVisible(to: owner) == true else { continue }
            if tasks.count == limit {
                next = log.stamp(of: tasks[limit - 1].id)  // more to come: continue after the last one answered
                break
            }
            tasks.append(entry.task)
        }
        let removed = log.removals.filter { $0.seq > after && $0.seq <= next && Self.sees(owner, $0.owner) }.map(\.taskId)
        return TaskChangePage(tasks: tasks, removed: removed, next: next,
                              resync: after > log.seq || (after > 0 && after < log.forgottenThrough))
    }

    private static func sees(_ requester: String?, _ owner: String?) -> Bool { owner == nil || owner == requester }
}
