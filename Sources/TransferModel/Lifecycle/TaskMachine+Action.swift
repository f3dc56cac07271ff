extension TaskMachine {
    /// What the service does after a transition, in the order given. The machine decides; the
    /// service (`TransferService+Lifecycle`) carries them out with the task's data.
    package enum Action: Sendable, Hashable {
        /// A new version, stored now (the client is told only once it is durable).
        case persist
        /// A new version, stored with the next checkpoint (progress-like changes).
        case publish
        /// Let the scheduler admit the next queued tasks.
        case admitNext
        /// Queue it, or hold it until its earliestBeginDate: the `schedule` event.
        case schedule
        /// Hand the scheduler a ticket for it (its phase is `queued` already).
        case enqueue
        /// Take it out of the scheduler: its place in the queue, or its slot.
        case leaveScheduler
        /// Drop its hold (a retry's backoff, a wait for connectivity, its earliestBeginDate).
        case releaseHold
        /// Hold it until its earliestBeginDate and arm the hold timer.
        case holdUntilBeginDate
        /// Hold it for the delay the retry policy chose: it leaves the scheduler and the engine,
        /// and the hold timer is armed.
        case hold
        /// One more try after a transient failure (`retryCount`).
        case countRetry
        /// Open its stream connection: the `streamOpening` event.
        case startStream
        /// Record when it started (`startedAt`).
        case recordStart
        /// Ask the URL cache, else build the transfer job and start it in the engine.
        case startTransfer
        /// A command for the engine's transfer (or stream connection).
        case engine(EngineOrder)
        /// Append an event to the session's feed (with the task's fields for it).
        case emit(EventType)
        /// Complete it with this error: the `finish` event.
        case fail(Failure)
        /// Complete it as cancelled: a download's partial file is deleted, or kept with resume
        /// data when asked for; then the `finish` event.
        case completeCancelled
        /// Record the outcome: its error, `completedAt`, and let go of what it held (the login,
        /// the request body, its place in the engine).
        case recordCompletion
        /// The task's metrics are complete (didFinishCollectingMetrics).
        case collectMetrics
        /// Its session may now finish invalidating.
        case checkInvalidation
    }

    /// The engine commands a transition sends (the service builds their jobs).
    package enum EngineOrder: String, Sendable, Hashable, CaseIterable {
        case pause, resume, cancel, preempt, openStream
    }

    /// Why a transition completes a task without the engine.
    package enum Failure: String, Sendable, Hashable, CaseIterable {
        /// Resumed, but its URL's scheme is not one the daemon transfers.
        case unsupportedURL
    }
}
