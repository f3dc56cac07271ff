/// Whether the store's commits succeed, as a value with transitions that say what to report.
/// Owned by `Store` (under a mutex); tested without I/O.
///
/// A burst of failures is reported once when it begins (an error log line) and once when a
/// commit succeeds again; every failed attempt in between is only counted.
struct StoreHealth: Sendable {
    /// The failure of the last commit attempt, nil while commits succeed.
    private(set) var failure: StoreFailure?
    /// Failed attempts since the burst began.
    private(set) var failedAttempts = 0
    private var since: ContinuousClock.Instant?

    /// What the store reports after a transition.
    enum Report: Equatable {
        case none
        /// The first failure after a success: log it at error level.
        case began(StoreFailure)
        /// Still failing, for another reason than before (disk full became an I/O error).
        case changed(StoreFailure)
        /// A commit succeeded after `attempts` failed ones over `duration`.
        case recovered(attempts: Int, duration: Duration)
    }

    /// A commit attempt failed with `failure`.
    mutating func failed(_ failure: StoreFailure, at now: ContinuousClock.Instant) -> Report {
        defer {
            self.failure = failure
            failedAttempts += 1
        }
        guard let previous = self.failure else {
            since = now
            return .began(failure)
        }
        return previous.kind == failure.kind ? .none : .changed(failure)
    }

    /// A commit succeeded.
    mutating func committed(at now: ContinuousClock.Instant) -> Report {
        guard failure != nil else { return .none }
        defer {
            failure = nil
            failedAttempts = 0
            since = nil
        }
        return .recovered(attempts: failedAttempts, duration: since.map { now - $0 } ?? .zero)
    }
}
