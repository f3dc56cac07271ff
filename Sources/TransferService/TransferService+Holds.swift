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
    /// Keeps running task `id` out of the scheduler until `until`, for a retry (`holdForRetry`,
    /// phase `retrying`) or for connectivity (`holdForConnectivity`, phase `waiting`). A task in
    /// the engine must have left it (its transfer ended); its slot is freed for the next task.
    func hold(_ s: inout ServiceState, task id: Int, until: Date, for reason: TaskMachine.Event, _ deliveries: inout Deliveries) {
        for action in transition(&s, task: id, reason) {
            guard action == .hold, let phase = s.tasks[id]?.task.phase else {
                perform(action, task: id, &s, &deliveries)
                continue
            }
            s.scheduler.remove(taskId: id)
            s.tasks[id]?.inEngine = false
            s.holds.insert(task: id, until: until, phase: phase)
            armHoldTimer(&s)
        }
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
    func schedule(_ s: inout ServiceState, task id: Int, now: Date = Date(), _ deliveries: inout Deliveries) {
        perform(transition(&s, task: id, .schedule, now: now), task: id, &s, &deliveries)
    }

    /// The hold timer fired: enqueues every running task whose hold is due, admits, re-arms.
    func releaseDueHolds(now: Date = Date()) {
        let deliveries = state.withLock { s in
            var deliveries = Deliveries()
            for id in s.holds.takeDue(now: now) {
                // A running task is queued; one its earliestBeginDate held is announced first
                // (willBeginDelayedRequest: URLSession asks its delegate, a service tells the client).
                perform(transition(&s, task: id, .holdDue, now: now), task: id, &s, &deliveries)
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
