/// The life of one request's answer, as a value: who may act on the connection next.
///
/// Owned by a `Responder` behind its lock. Every transition returns the action to perform
/// after the lock is released, so the C calls never run under the lock (STYLE: "take the
/// lock, compute an action, release, then perform"). The connection thread drives
/// `handlerReturned`, `suspendCompleted` and `resumedCallReached`; any thread may call
/// `respond`.
///
///     handling ──handlerReturned, answered──────────────────────────────▶ responded
///        │ handlerReturned, no answer yet
///        ▼
///     suspending ──suspendCompleted, answered meanwhile──▶ resuming ──resumedCallReached──▶ responded
///        │ suspendCompleted                                   ▲
///        ▼                                                    │
///     suspended ──────────────respond (any thread)────────────┘
///
/// `suspending` exists because MHD_suspend_connection runs outside the lock: a response that
/// arrives before it returns must not trigger MHD_resume_connection on a connection that is
/// not suspended yet (undefined behaviour in 0.9.75), so the connection thread resumes it
/// itself once the suspension is done.
struct ResponderState: Sendable {
    enum Phase: Sendable {
        /// handle() is running on the connection thread; `pending` is an answer given meanwhile.
        case handling(pending: HTTPResponse?)
        /// handle() returned without an answer; MHD_suspend_connection is being called.
        case suspending(pending: HTTPResponse?)
        /// The connection is suspended and holds no thread.
        case suspended
        /// MHD_resume_connection was called (or is about to be); the answer waits for the
        /// access handler's next call.
        case resuming(HTTPResponse)
        /// The answer was handed to libmicrohttpd. Later calls are ignored.
        case responded
    }

    /// What the caller must do once the lock is released.
    enum Action: Sendable {
        /// Nothing to do now (an answer was stored for later, or a transition needs no call).
        case none
        /// `respond` came after an earlier answer; it is dropped.
        case ignored
        /// Queue this response on the connection (connection thread only).
        case queue(HTTPResponse)
        /// Call MHD_suspend_connection, then `suspendCompleted()` (connection thread only).
        case suspend
        /// Call MHD_resume_connection (any thread).
        case resume
    }

    private(set) var phase: Phase = .handling(pending: nil)

    /// Any thread: the handler (or the server, at stop) answers. The first answer wins.
    mutating func respond(_ response: HTTPResponse) -> Action {
        switch phase {
        case .handling(pending: nil):
            phase = .handling(pending: response)
            return .none
        case .suspending(pending: nil):
            phase = .suspending(pending: response)
            return .none
        case .suspended:
            phase = .resuming(response)
            return .resume
        case .handling, .suspending, .resuming, .responded:
            return .ignored
        }
    }

    /// Connection thread: handle() returned.
    mutating func handlerReturned() -> Action {
        switch phase {
        case .handling(pending: let response?):
            phase = .responded
            return .queue(response)
        case .handling(pending: nil):
            phase = .suspending(pending: nil)
            return .suspend
        case .suspending, .suspended, .resuming, .responded:
            preconditionFailure("handlerReturned() in \(phase)")
        }
    }

    /// Connection thread: MHD_suspend_connection returned.
    mutating func suspendCompleted() -> Action {
        switch phase {
        case .suspending(pending: let response?):
            phase = .resuming(response)
            return .resume
        case .suspending(pending: nil):
            phase = .suspended
            return .none
        case .handling, .suspended, .resuming, .responded:
            preconditionFailure("suspendCompleted() in \(phase)")
        }
    }

    /// Connection thread: the access handler ran again for this request after a resume.
    /// Queues the stored answer; any other call (none is expected) does nothing.
    mutating func resumedCallReached() -> Action {
        guard case .resuming(let response) = phase else { return .none }
        phase = .responded
        return .queue(response)
    }
}

extension ResponderState.Phase: CustomStringConvertible {
    var description: String {
        switch self {
        case .handling(let pending): pending == nil ? "handling" : "handling(answered)"
        case .suspending(let pending): pending == nil ? "suspending" : "suspending(answered)"
        case .suspended: "suspended"
        case .resuming: "resuming"
        case .responded: "responded"
        }
    }
}
