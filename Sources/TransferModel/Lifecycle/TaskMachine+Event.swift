extension TaskMachine {
    /// What happens to a task: a client's command, the scheduler's or a timer's decision, an
    /// engine update, or the daemon's restart. Events that change nothing of a task's life
    /// (progress, redirects, a new priority) do not come here. Where each comes from is in
    /// brackets (files of Service/, `TransferService+` left out).
    package enum Event: String, Sendable, Hashable, CaseIterable {
        /// POST /v1/tasks/{tid}/resume [Tasks: resume].
        case resume
        /// POST /v1/tasks/{tid}/suspend [Tasks: suspend].
        case suspend
        /// POST /v1/tasks/{tid}/cancel, or its session invalidated with cancel [Tasks: cancel,
        /// Sessions: invalidate].
        case cancel
        /// Created running, resumed, or recovered: queued, or held until its earliestBeginDate
        /// [Holds: schedule, from Create, the resume action and Load].
        case schedule
        /// Queued for admission again: recovered at a restart, or the URL cache lost the stored
        /// response it was revalidating [Tasks: enqueue, from Load and URLCache].
        case enqueue
        /// The scheduler gave it a slot [Tasks: admit, start].
        case admit
        /// The scheduler takes a background transfer's slot for a higher class [Tasks: preempt].
        case preempt
        /// A transient failure: held for a retry's backoff [Retries, Holds: hold].
        case holdForRetry
        /// The host was unreachable: held until connectivity is tried again [Retries, Holds: hold].
        case holdForConnectivity
        /// The hold timer found its hold due [Holds: releaseDueHolds].
        case holdDue
        /// A stream task's connection is being opened, at creation or resume [Streams: startStream].
        case streamOpening
        /// The engine's `response` [EngineUpdates].
        case responseReceived
        /// A stream's connection is open [Streams: streamChanged].
        case streamConnected
        /// A tus upload goes on at the server's offset [EngineUpdates].
        case uploadResumed
        /// A tus upload's step failed and is tried again inside the engine [EngineUpdates].
        case uploadRetrying
        /// The URL cache answers the task [URLCache: serveFromCache].
        case servedFromCache
        /// The engine let a transfer go: suspended past its connection, or preempted [EngineUpdates].
        case detached
        /// The task ends, with or without an error [Tasks: complete, from engine completions,
        /// cancels, failures before a start, restart recovery].
        case finish
        /// A started transfer starts over at a restart [Load: reset].
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
