internal import FoundationEssentials
internal import Synchronization
internal import JSONModel
internal import TransferModel

/// Holding a running task out of the scheduler until a date, in a phase that says why
/// (`retrying` during a backoff, `waiting` for connectivity or for the task's earliestBeginDate). When the hold falls due the task is enqueued and admitted like any other.
///
/// Holds live in memory only (`ServiceState.holds`): after a restart a task that was held is
/// simply enqueued (`TransferService+Load`). A suspend drops the hold (the task stays
/// suspended, phase `queued`); a resume then enqueues it at once, not at the old date: the client
/// asked for it now. Cancel and every other completion drop it in `complete`.
extension TransferService {
    /// Keeps running task `id` out of the scheduler until `until`, in `phase`. A task in the
    /// engine must have left it (its transfer ended); its slot is freed for the next task.
    func hold(_ s: inout ServiceState, task id: Int, until: Date, phase: TaskPhase, _ deliveries: inout Deliveries) {
        guard s.tasks[id] != nil else { return }
        s.scheduler.remove(taskId: id)
        s.tasks[id]?.inEngine = false
        s.tasks[id]?.task.phase = phase
        s.holds.insert(task: id, until: until, phase: phase)
        changed(&s, task: id, persist: true, &deliveries)
        armHoldTimer(&s)
        admit(&s, &deliveries)
    }

    /// Drops task `id`'s hold, if any, without enqueueing it. Returns whether it was held.
    @discardableResult
    func releaseHold(_ s: inout ServiceState, task id: Int) -> Bool {
        guard s.holds.remove(task: id) != nil else { return false }
        armHoldTimer(&s)
        return true
    }

    /// Queues running task `id` for admission, or, while its earliestBeginDate is ahead and it
    /// has not started, holds it until then (phase `waiting`). The caller admits and persists.
    func schedule(_ s: inout ServiceState, task id: Int, now: Date = Date()) {
        guard let task = s.tasks[id]?.task else { return }
        if task.startedAt == nil, let begin = task.earliestBeginDate, begin > now {
            s.scheduler.remove(taskId: id)
            s.tasks[id]?.task.phase = .waiting
            s.holds.insert(task: id, until: begin, phase: .waiting)
            armHoldTimer(&s)
        } else {
            enqueue(&s, task: id)
        }
    }

    /// The hold timer fired: enqueues every running task whose hold is due, admits, re-arms.
    func releaseDueHolds(now: Date = Date()) {
        let deliveries = state.withLock { s in
            var deliveries = Deliveries()
            for id in s.holds.takeDue(now: now) where s.tasks[id]?.task.state == .running {
                if let task = s.tasks[id]?.task, task.startedAt == nil, task.earliestBeginDate != nil {
                    // URLSession asks its delegate here; a service tells the client instead.
                    emit(&s, session: task.sessionId, task: id, .willBeginDelayedRequest,
                         ["request": JSONValue(encoding: task.originalRequest)], &deliveries)
                }
                enqueue(&s, task: id)
                changed(&s, task: id, persist: true, &deliveries)
            }
            armHoldTimer(&s)
            admit(&s, &deliveries)
            return deliveries
        }
        deliveries.run()
    }

    /// Arms the one timer for the earliest hold (under the lock, so arming follows the order of
    /// the changes).
    func armHoldTimer(_ s: inout ServiceState) {
        holdTimer.arm(at: s.holds.nextDue())
    }
}
