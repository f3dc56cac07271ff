internal import FoundationEssentials
internal import Dispatch
internal import Synchronization

/// The one timer behind every hold (`Holds`): a DispatchSource armed for the earliest due date,
/// re-armed whenever that changes. Owned by `TransferService`: `start` gives it what to run,
/// `cancel` ends it at stop. Arming before `start` is remembered and applied then.
///
/// `@unchecked Sendable`: `source`, `due` and `cancelled` are only touched under `lock`, and
/// DispatchSource's `schedule` and `cancel` are documented thread-safe.
final class HoldTimer: @unchecked Sendable {
    private let lock = Mutex(())
    private var source: (any DispatchSourceTimer)?
    private var due: Date?
    private var cancelled = false

    /// Creates the timer source; `fire` runs on the timer's own queue when a hold falls due.
    func start(_ fire: @escaping @Sendable () -> Void) {
        lock.withLock { _ in
            guard source == nil, !cancelled else { return }
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "transferd.holds"))
            timer.setEventHandler { [weak self] in
                // Fired: whatever the handler arms next is scheduled, even the same date again
                // (a timer that fired a little early must fire once more).
                self?.lock.withLock { _ in self?.due = nil }
                fire()
            }
            source = timer
            schedule()
            timer.resume()
        }
    }

    /// Fires once at `date` (at once when it has passed); nil disarms.
    func arm(at date: Date?) {
        lock.withLock { _ in
            guard date != due else { return }
            due = date
            schedule()
        }
    }

    func cancel() {
        lock.withLock { _ in
            cancelled = true
            source?.cancel()
            source = nil
        }
    }

    /// Under `lock`.
    private func schedule() {
        guard let source else { return }
        guard let due else {
            source.schedule(deadline: .distantFuture, leeway: .seconds(1))
            return
        }
        let delay = max(0, due.timeIntervalSinceNow)
        source.schedule(deadline: .now() + .nanoseconds(Int(min(delay, 1e9) * 1e9)), leeway: .milliseconds(5))
    }
}
