/// A task's life as a value: its `state` (URLSessionTask.State) and `phase` (where it is in the
/// daemon's pipeline), and the one place that changes them. `TransferService` feeds it an event
/// under its lock, gets back what to do (`Action`s, in order) and does it; `TransferTask` serves
/// the two fields read-only. Like `ResponderState`, it has no I/O and is tested over every
/// state, phase, event and fact (`TaskMachineTests`).
///
/// The table (4 states x 6 phases x 19 events, 456 cells; facts in brackets). No transition
/// depends on the phase a task is in, so a column holds for every phase of its state; "-" is an
/// ignored event (no change, no action). A completed task is final: every event is ignored,
/// and the three commands are refused (409 `task_completed`).
///
///     event            running                          suspended                        canceling
///     ---------------  -------------------------------  -------------------------------  ----------------------
///     resume           -                                running; [stream] startStream,   -
///                                                       persist, admitNext; [inEngine]
///                                                       engine(resume), persist,
///                                                       admitNext; [supported URL]
///                                                       schedule, persist, admitNext;
///                                                       [else] fail(unsupportedURL)
///     suspend          [stream] refused (409            -                                -
///                      stream_not_suspendable);
///                      suspended; [inEngine]
///                      engine(pause), persist; [held]
///                      /queued, leaveScheduler,
///                      releaseHold, persist; [else]
///                      leaveScheduler, persist
///     cancel           [inEngine] canceling, persist,   as running                       [inEngine] -;
///                      engine(cancel); [else]                                            [else] completeCancelled
///                      completeCancelled
///     schedule         [begins later] /waiting,         - (*)                            completeCancelled (*)
///                      leaveScheduler,
///                      holdUntilBeginDate; [else]
///                      /queued, enqueue
///     enqueue          /queued, enqueue                 /queued (*1)                     completeCancelled (*1)
///     admit            /connecting, recordStart,        leaveScheduler (*)               completeCancelled (*)
///                      startTransfer
///     preempt          [inEngine] /queued,              as running                       as running
///                      engine(preempt),
///                      emit(wasPreempted), persist
///     holdForRetry     /retrying, countRetry, hold,     - (*)                            completeCancelled (*)
///                      persist, admitNext
///     holdForConn.     /waiting, hold, persist,         - (*)                            completeCancelled (*)
///                      admitNext
///     holdDue          /queued, [begin date]            -                                completeCancelled (*)
///                      emit(willBeginDelayedRequest),
///                      enqueue, persist
///     streamOpening    [not inEngine] /connecting,      - (*)                            completeCancelled (*)
///                      recordStart,
///                      engine(openStream), persist
///     responseReceived /transferring, publish           as running                       as running
///     streamConnected, uploadResumed, servedFromCache:
///                      /transferring, persist           as running                       as running
///     uploadRetrying   /retrying, publish               as running                       as running
///     detached         /queued, leaveScheduler,         /queued, leaveScheduler,         /queued, leaveScheduler,
///                      enqueue, persist, admitNext      persist, admitNext               completeCancelled, admitNext
///     finish           completed/done, leaveScheduler, releaseHold, recordCompletion, persist, collectMetrics,
///                      emit(didCompleteWithError), checkInvalidation, admitNext (in every state)
///     reset            /queued                          /queued                          /queued
///
/// "/phase" changes only the phase. Follow-ups: `schedule`, `startStream`, `fail` and
/// `completeCancelled` are carried out by feeding the `schedule`, `streamOpening` and `finish`
/// events in turn.
///
/// (*) No path reaches these today (the service calls them for running tasks only); the
/// answers keep the invariants: a suspended task waits for its resume, a canceling one that
/// would go again completes as cancelled. (*1) Reached only when a revalidation's stored
/// response vanished while the task was being suspended or cancelled (the URL cache starts it
/// again): it used to be queued and could run again; now it waits for its resume, or completes
/// as cancelled.
package struct TaskMachine: Sendable, Hashable {
    package private(set) var state: TaskState
    package private(set) var phase: TaskPhase

    /// A new task: created running or suspended, queued until scheduled.
    init(created state: TaskState) {
        self.state = state
        self.phase = .queued
    }

    /// A task as stored (decoding), or as a test sets it up.
    init(restoring state: TaskState, phase: TaskPhase) {
        self.state = state
        self.phase = phase
    }

    /// Applies `event` and returns what the service must do, in order; an empty list when the
    /// event changes nothing in this state. Throws for a command the API refuses (409).
    package mutating func handle(_ event: Event, _ facts: Facts = Facts()) throws(Refusal) -> [Action] {
        guard state != .completed else {
            switch event {
            case .resume, .suspend, .cancel: throw .completed
            default: return []  // completed is final
            }
        }
        switch event {
        case .resume: return resume(facts)
        case .suspend: return try suspend(facts)
        case .cancel: return cancel(facts)
        case .schedule, .enqueue, .admit, .holdForRetry, .holdForConnectivity, .holdDue, .streamOpening:
            return goOn(event, facts)
        case .preempt:
            guard facts.inEngine else { return [] }
            phase = .queued
            return [.engine(.preempt), .emit(.wasPreempted), .persist]
        case .responseReceived:
            // A transfer's response is progress-like: a restart runs the transfer again, and
            // what a resumed download needs of it (its validator) is in the checkpoint, which is
            // stored at once. Stored with the next checkpoint or the completion, it is not a
            // row write of its own for every download (a 16 KiB one made three).
            phase = .transferring
            return [.publish]
        case .streamConnected, .uploadResumed, .servedFromCache:
            phase = .transferring
            return [.persist]
        case .uploadRetrying:
            phase = .retrying
            return [.publish]
        case .detached:
            phase = .queued
            switch state {
            case .canceling: return [.leaveScheduler, .completeCancelled, .admitNext]
            case .running: return [.leaveScheduler, .enqueue, .persist, .admitNext]
            case .suspended, .completed: return [.leaveScheduler, .persist, .admitNext]
            }
        case .finish:
            state = .completed
            phase = .done
            return [.leaveScheduler, .releaseHold, .recordCompletion, .persist, .collectMetrics,
                    .emit(.didCompleteWithError), .checkInvalidation, .admitNext]
        case .reset:
            phase = .queued
            return []
        }
    }

    private mutating func resume(_ facts: Facts) -> [Action] {
        guard state == .suspended else { return [] }
        state = .running
        // A stream is only ever suspended before it connected.
        if facts.isStream { return [.startStream, .persist, .admitNext] }
        if facts.inEngine { return [.engine(.resume), .persist, .admitNext] }
        guard facts.urlSupported else { return [.fail(.unsupportedURL)] }
        return [.schedule, .persist, .admitNext]
    }

    private mutating func suspend(_ facts: Facts) throws(Refusal) -> [Action] {
        guard state == .running else { return [] }
        // A connection the client drives has nothing to pause: it reads and writes when it wants.
        guard !facts.isStream else { throw .streamNotSuspendable }
        state = .suspended
        // A paused transfer keeps its connection and its slot.
        if facts.inEngine { return [.engine(.pause), .persist] }
        guard facts.isHeld else { return [.leaveScheduler, .persist] }
        // A task held for a retry or for connectivity waits for its resume instead.
        phase = .queued
        return [.leaveScheduler, .releaseHold, .persist]
    }

    private mutating func cancel(_ facts: Facts) -> [Action] {
        // Out of the engine (queued, held, suspended after a restart), it completes at once.
        guard facts.inEngine else { return [.completeCancelled] }
        guard state != .canceling else { return [] }
        state = .canceling
        return [.persist, .engine(.cancel)]
    }

    /// The events that send a task (again) towards the engine: only a running task goes.
    private mutating func goOn(_ event: Event, _ facts: Facts) -> [Action] {
        switch state {
        case .running:
            break
        case .canceling:
            // Out of the engine already: nothing is left to stop.
            return [.completeCancelled]
        case .suspended, .completed:
            switch event {
            case .enqueue:
                phase = .queued
                return []
            case .admit:
                return [.leaveScheduler]  // gives its slot back
            default:
                return []
            }
        }
        switch event {
        case .schedule where facts.beginDate == .ahead:
            phase = .waiting
            return [.leaveScheduler, .holdUntilBeginDate]
        case .schedule, .enqueue:
            phase = .queued
            return [.enqueue]
        case .admit:
            phase = .connecting
            return [.recordStart, .startTransfer]
        case .holdForRetry:
            phase = .retrying
            return [.countRetry, .hold, .persist, .admitNext]
        case .holdForConnectivity:
            phase = .waiting
            return [.hold, .persist, .admitNext]
        case .holdDue:
            phase = .queued
            // URLSession asks its delegate before a delayed request begins; the feed tells the client.
            return facts.beginDate == .none ? [.enqueue, .persist] : [.emit(.willBeginDelayedRequest), .enqueue, .persist]
        case .streamOpening:
            guard !facts.inEngine else { return [] }
            phase = .connecting
            return [.recordStart, .engine(.openStream), .persist]
        default:
            return []
        }
    }
}
