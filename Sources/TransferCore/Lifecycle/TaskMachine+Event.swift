extension TaskMachine {
    /// What happens to a task: a client's command, the scheduler's or a timer's decision, an
    /// engine update, or the daemon's restart. Events that change nothing of a task's life
    /// (progress, redirects, a new priority) do not come here.
    package enum Event: String, Sendable, Hashable, CaseIterable {
        // The client (POST /v1/tasks/{tid}/resume, /suspend, /cancel).
        case resume, suspend, cancel
        /// Created running, resumed, or recovered: queued, or held until its earliestBeginDate.
        case schedule
        /// Queued for admission again (a transfer that left the engine, the URL cache's retry).
        case enqueue
        /// The scheduler gave it a slot.
        case admit
        /// The scheduler takes a background transfer's slot for a higher class.
        case preempt
        /// A transient failure: held for a retry's backoff.
        case holdForRetry
        /// The host was unreachable: held until connectivity is tried again.
        case holdForConnectivity
        /// The hold timer found its hold due.
        case holdDue
        /// A stream task's connection is being opened (at creation or resume).
        case streamOpening
        // The engine and the URL cache.
        case responseReceived, streamConnected, uploadResumed, uploadRetrying, servedFromCache
        /// The engine let a transfer go (suspended past its connection, or preempted).
        case detached
        /// The task ends, with or without an error.
        case finish
        /// A started transfer starts over (restart recovery, a transfer admitted again).
        case reset
    }

    /// What the machine needs to know of the task beyond its state and phase. The service
    /// reads them from the task's entry; tests go through every combination.
    package struct Facts: Sendable, Hashable, CustomStringConvertible {
        /// A stream task (a TCP connection the client drives).
        package var isStream = false
        /// The engine has its transfer (`TaskEntry.inEngine`).
        package var inEngine = false
        /// It is held (`Holds`): a retry's backoff, a wait for connectivity or its earliestBeginDate.
        package var isHeld = false
        /// Its URL's scheme is one the daemon transfers.
        package var urlSupported = true
        /// Its earliestBeginDate, for a task that has not started yet.
        package var beginDate = BeginDate.none

        package init(isStream: Bool = false, inEngine: Bool = false, isHeld: Bool = false, urlSupported: Bool = true, beginDate: BeginDate = .none) {
            self.isStream = isStream
            self.inEngine = inEngine
            self.isHeld = isHeld
            self.urlSupported = urlSupported
            self.beginDate = beginDate
        }

        /// Every combination, for tests that go through them all.
        package static let all: [Facts] = [false, true].flatMap { isStream in
            [false, true].flatMap { inEngine in
                [false, true].flatMap { isHeld in
                    [false, true].flatMap { urlSupported in
                        BeginDate.allCases.map { Facts(isStream: isStream, inEngine: inEngine, isHeld: isHeld, urlSupported: urlSupported, beginDate: $0) }
                    }
                }
            }
        }

        package var description: String {
            "stream=\(isStream) inEngine=\(inEngine) held=\(isHeld) supported=\(urlSupported) begin=\(beginDate)"
        }
    }

    /// A not yet started task's earliestBeginDate (URLSessionTask.earliestBeginDate).
    package enum BeginDate: String, Sendable, Hashable, CaseIterable {
        /// It has none, or the task has started already.
        case none
        /// It has passed: the task may start.
        case passed
        /// It is ahead: the task waits.
        case ahead
    }

    /// A command the machine turns down: the API answers 409 with its code.
    package enum Refusal: Error, Sendable, Hashable, CaseIterable {
        /// A completed task takes no more commands (`task_completed`).
        case completed
        /// A running stream task has nothing to pause (`stream_not_suspendable`).
        case streamNotSuspendable
    }
}
