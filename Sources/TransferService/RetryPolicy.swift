internal import FoundationEssentials
internal import TransferModel

/// When a finished attempt is tried again, and after how long. A value with no I/O, tested on its
/// own; `TransferService+Retries` applies its decisions.
///
/// - Background sessions retry transient failures (connection lost or reset, idle timeout, HTTP
///   408, 429 and 5xx) with `backoff`, honouring Retry-After, as BITS and URLSession's
///   background sessions do. Default and ephemeral sessions report them at once.
/// - A host that cannot be reached at all (no connection made) makes the task wait for
///   connectivity, trying again every `connectivity` interval, in background sessions and in
///   sessions with waitsForConnectivity; other sessions fail at once with the connect error.
/// - Nothing starts after the resource deadline (createdAt + timeoutIntervalForResource): a
///   retry that would start later gives up with the last outcome as it is (a data task's last
///   503 completes as that response, as URLSession reports it), a wait fails with timedOut.
struct RetryPolicy: Sendable {
    var backoff: Backoff
    var connectivity: Backoff

    enum Decision: Equatable {
        /// The outcome stands: the task completes with it.
        case finish
        /// Try again after this many seconds (phase `retrying`).
        case retry(after: Double)
        /// Try to connect again after this many seconds (phase `waiting`).
        case wait(after: Double)
        /// The resource deadline passed while waiting for connectivity: fail with this error.
        case stopWaiting(TaskError)
    }

    /// - Parameters:
    ///   - retries: retries the task has made so far (the backoff's exponent).
    ///   - waits: tries made so far in the current wait for connectivity.
    func decide(
        _ failure: AttemptFailure?, session: SessionKind, waitsForConnectivity: Bool,
        retries: Int, waits: Int, now: Date, deadline: Date,
        using random: inout some RandomNumberGenerator
    ) -> Decision {
        switch failure {
        case nil:
            return .finish
        case .unreachable(let error):
            guard waitsForConnectivity || session == .background else { return .finish }
            let delay = connectivity.delay(attempt: waits, using: &random)
            guard now.addingTimeInterval(delay) < deadline else {
                return .stopWaiting(TaskError(.timedOut, "no connection could be made within the session's timeoutIntervalForResource; last error: \(error.message)"))
            }
            return .wait(after: delay)
        case .transient(_, _, let retryAfter):
            guard session == .background else { return .finish }
            // Retry-After is the least wait the server asks for, bounded by the cap so a far-off
            // date cannot park the task for days (the deadline still bounds it too).
            let delay = max(backoff.delay(attempt: retries, using: &random), min(retryAfter ?? 0, backoff.cap))
            guard now.addingTimeInterval(delay) < deadline else { return .finish }
            return .retry(after: delay)
        }
    }

    func decide(
        _ failure: AttemptFailure?, session: SessionKind, waitsForConnectivity: Bool,
        retries: Int, waits: Int, now: Date, deadline: Date
    ) -> Decision {
        var random = SystemRandomNumberGenerator()
        return decide(failure, session: session, waitsForConnectivity: waitsForConnectivity,
                      retries: retries, waits: waits, now: now, deadline: deadline, using: &random)
    }
}
