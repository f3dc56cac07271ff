internal import Synchronization

/// When a held request (`RouteResult.held`) began to wait: from the moment its handler returned
/// without an answer until the answer came, the request waited for the client's `wait=`, not for
/// the daemon. The latency histogram leaves that time out and the access log shows it apart
/// (`http.held`). An answer given inside the handler, or before `begin()`, was held for no time.
final class LongPollHold: Sendable {
    private let since = Mutex<ContinuousClock.Instant?>(nil)

    /// The handler returned with the request held.
    func begin() { since.withLock { $0 = .now } }

    /// How long the request has been held, zero if it never was.
    func held() -> Duration {
        since.withLock { $0.map { .now - $0 } } ?? .zero
    }
}
