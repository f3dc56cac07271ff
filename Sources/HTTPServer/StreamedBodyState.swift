/// The reads of one streamed response body, as a value: whether its connection is suspended
/// waiting for data, and who resumes it.
///
/// Owned by a `StreamedBody` behind its lock. Every transition returns the action to perform
/// once the lock is released (STYLE: "take the lock, compute an action, release, then
/// perform"); the stream's `read` and the C calls never run under the lock. The connection
/// thread drives `readStarting`, `readGave*` and `suspendCompleted`; any thread may call
/// `wake` (the stream's wake) and `cancel` (stop()); `close` is the response's free callback.
///
///     idle ──readStarting──▶ reading ──readGaveData──▶ idle
///                              │ readGaveWait (woken during the read: retry ▶ idle)
///                              ▼
///                           suspending ──suspendCompleted, woken meanwhile──▶ resuming ──readStarting──▶ reading
///                              │ suspendCompleted                                  ▲
///                              ▼                                                   │
///                           suspended ──────────────wake or cancel─────────────────┘
///
/// `suspending` exists because MHD_suspend_connection runs outside the lock: a wake before it
/// returns must not call MHD_resume_connection on a connection not suspended yet (undefined
/// behaviour in 0.9.75), so the connection thread resumes it itself afterwards. Exactly one
/// `.resume` is returned per `.suspend`.
struct StreamedBodyState: Sendable {
    enum Phase: Sendable, Equatable {
        /// No read running: libmicrohttpd sends what the last read gave, or has not asked yet.
        case idle
        /// The stream's read runs on the connection thread; `woken`: its wake came meanwhile.
        case reading(woken: Bool)
        /// The read gave `.wait`; MHD_suspend_connection is being called.
        case suspending(woken: Bool)
        /// The connection is suspended and holds no thread.
        case suspended
        /// MHD_resume_connection was called (or is about to be); libmicrohttpd reads again next.
        case resuming
        /// The response was destroyed: the connection may be gone, wakes do nothing.
        case closed
    }

    /// What the caller must do once the lock is released.
    enum Action: Sendable, Equatable {
        /// Nothing.
        case none
        /// Call the stream's read (connection thread).
        case read
        /// Return 0 without suspending: a wake came during the read, so libmicrohttpd's next
        /// pass calls again (it keeps a connection whose body is not ready in its ready list).
        case retry
        /// End the body with an error (stop() began), without reading.
        case fail
        /// Call MHD_suspend_connection, then `suspendCompleted()` (connection thread).
        case suspend
        /// Call MHD_resume_connection (any thread), then count the suspension as over.
        case resume
    }

    private(set) var phase: Phase = .idle
    /// stop() began: no read and no suspension any more, the next call ends the body with an error.
    private(set) var cancelled = false

    /// Connection thread: libmicrohttpd asks for the next bytes.
    mutating func readStarting() -> Action {
        switch phase {
        case .idle, .resuming:
            if cancelled {
                phase = .idle
                return .fail
            }
            phase = .reading(woken: false)
            return .read
        case .reading, .suspending, .suspended, .closed:
            preconditionFailure("readStarting() in \(phase)")
        }
    }

    /// Connection thread: the read gave bytes, the end or a failure.
    mutating func readGaveData() {
        guard case .reading = phase else { preconditionFailure("readGaveData() in \(phase)") }
        phase = .idle
    }

    /// Connection thread: the read gave `.wait`.
    mutating func readGaveWait() -> Action {
        guard case .reading(let woken) = phase else { preconditionFailure("readGaveWait() in \(phase)") }
        if cancelled {
            phase = .idle
            return .fail
        }
        if woken {
            phase = .idle
            return .retry
        }
        phase = .suspending(woken: false)
        return .suspend
    }

    /// Connection thread: MHD_suspend_connection returned.
    mutating func suspendCompleted() -> Action {
        guard case .suspending(let woken) = phase else { preconditionFailure("suspendCompleted() in \(phase)") }
        if woken || cancelled {
            phase = .resuming
            return .resume
        }
        phase = .suspended
        return .none
    }

    /// Any thread: the stream's wake. Only a suspended connection needs a call; a wake at any
    /// other time is remembered (during a read or a suspension) or needs nothing.
    mutating func wake() -> Action {
        switch phase {
        case .reading(woken: false):
            phase = .reading(woken: true)
            return .none
        case .suspending(woken: false):
            phase = .suspending(woken: true)
            return .none
        case .suspended:
            phase = .resuming
            return .resume
        case .idle, .reading, .suspending, .resuming, .closed:
            return .none
        }
    }

    /// Any thread (stop()): ends the body at its next read and never suspends again; a
    /// suspended connection is resumed for that read.
    mutating func cancel() -> Action {
        guard phase != .closed else { return .none }
        cancelled = true
        guard phase == .suspended else { return .none }
        phase = .resuming
        return .resume
    }

    /// The response was destroyed (libmicrohttpd never frees a suspended connection's response).
    mutating func close() {
        phase = .closed
    }
}

extension StreamedBodyState.Phase: CustomStringConvertible {
    var description: String {
        switch self {
        case .idle: "idle"
        case .reading(let woken): woken ? "reading(woken)" : "reading"
        case .suspending(let woken): woken ? "suspending(woken)" : "suspending"
        case .suspended: "suspended"
        case .resuming: "resuming"
        case .closed: "closed"
        }
    }
}
