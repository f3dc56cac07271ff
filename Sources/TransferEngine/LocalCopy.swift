internal import Dispatch
internal import Synchronization

/// The controls of one `data:` or `file:` URL delivery that runs on a worker thread of its own
/// (`LocalSchemeCopy`), so a large file or a long data: URL never holds up the engine thread.
/// The engine thread owns the entry (`EngineLoop.localCopies`) and pauses, resumes, cancels or
/// abandons the copy; the worker looks between chunks and reports through `report`.
final class LocalCopy: Sendable {
    /// What the worker does next, between two chunks.
    enum Step: Equatable {
        case go
        case cancelled
        /// The engine stopped (the daemon shuts down): end without a word, as HTTP transfers are
        /// dropped; the service finds the task as it recorded it.
        case abandoned
        /// Suspended for longer than the request's timeoutInterval (URLSession's rule).
        case suspendedTooLong
    }

    private struct State {
        var paused: Bool
        var cancelled = false
        var abandoned = false
        var finished = false
    }

    private let state: Mutex<State>
    /// Signalled whenever a paused worker should look again.
    private let wake = DispatchSemaphore(value: 0)

    init(paused: Bool) { state = Mutex(State(paused: paused)) }

    func pause() { state.withLock { $0.paused = true } }
    func resume() { state.withLock { $0.paused = false }; wake.signal() }
    func cancel() { state.withLock { $0.cancelled = true }; wake.signal() }
    func abandon() { state.withLock { $0.abandoned = true }; wake.signal() }

    /// Whether the worker reported its last update (the entry may go).
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Worker: what to do before the next chunk; waits while paused, up to `suspendTimeout`.
    func nextStep(suspendTimeout: Double) -> Step {
        var deadline: DispatchTime?
        while true {
            let now = state.withLock { s -> Step? in
                if s.abandoned { return .abandoned }
                if s.cancelled { return .cancelled }
                return s.paused ? nil : .go
            }
            if let now { return now }
            let until = deadline ?? .now() + max(0.001, suspendTimeout)
            deadline = until
            if wake.wait(timeout: until) == .timedOut, state.withLock({ $0.paused && !$0.cancelled && !$0.abandoned }) {
                return .suspendedTooLong
            }
        }
    }

    /// Worker: sends one update unless the copy was abandoned. Under the lock, so once `abandon`
    /// returns nothing more reaches the service (whose engine has stopped). `last` marks the copy
    /// finished in the same step, so a start of the same task right after it is not refused.
    /// The lock is never held by the engine thread while it waits for anything else.
    func report(last: Bool = false, _ send: () -> Void) {
        state.withLock { s in
            guard !s.abandoned else { return }
            if last { s.finished = true }
            send()
        }
    }
}
