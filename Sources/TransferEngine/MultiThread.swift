package import Curl
internal import Dispatch
package import Synchronization

/// What other threads hand a `MultiThread`'s loop; `stopping` tells the loop to end.
package protocol MultiThreadInbox: Sendable {
    var stopping: Bool { get set }
}

/// A curl multi handle on a dedicated thread of its own, fed through a locked inbox: other
/// threads change the inbox and wake the thread (curl_multi_wakeup, the one multi call that may
/// cross threads); the loop the thread runs owns the handle. The transfer engine and the webhook
/// deliverer both run this way.
package final class MultiThread<Inbox: MultiThreadInbox>: Sendable {
    /// Read by the loop, changed by `post`.
    package let inbox: Mutex<Inbox>
    private let waker: MultiWaker
    private let multi: HandOff<MultiHandle>
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    /// From `start` until the loop returns.
    private let running = Atomic<Bool>(false)

    package init(_ multi: MultiHandle, inbox: Inbox) {
        self.inbox = Mutex(inbox)
        waker = multi.waker
        self.multi = HandOff(multi)
    }

    /// Starts the thread, which runs `loop` with the multi handle until the loop returns (it
    /// returns once it sees `stopping`). Call once.
    package func start(_ loop: @escaping @Sendable (MultiHandle) -> Void) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        running.store(true, ordering: .relaxed)
        DedicatedThread.start { [self] in
            loop(multi.take())
            running.store(false, ordering: .relaxed)
            finished.signal()
        }
    }

    /// Whether the thread was started and its loop has not returned.
    var isRunning: Bool { running.load(ordering: .relaxed) }

    /// Changes the inbox, then wakes the thread if `change` says there is something for it.
    package func post(_ change: (inout Inbox) -> Bool) {
        if inbox.withLock({ change(&$0) }) { waker.wakeup() }
    }

    /// Asks the loop to end and waits up to `timeout` seconds; returns whether it ended.
    @discardableResult
    package func stop(timeout: Double) -> Bool {
        guard started.load(ordering: .relaxed) else { return true }
        post { $0.stopping = true; return true }
        guard finished.wait(timeout: .now() + timeout) == .success else { return false }
        finished.signal()  // stays signalled: a later stop returns at once instead of timing out
        return true
    }
}

/// Moves a non-Sendable value to another thread exactly once.
///
/// `@unchecked Sendable`: the creating thread never touches the value after wrapping it, and
/// `take()` is called once, by the thread that then owns the value.
final class HandOff<Value>: @unchecked Sendable {
    private var value: Value?
    init(_ value: Value) { self.value = value }
    func take() -> Value {
        guard let value else { preconditionFailure("HandOff.take called twice") }
        self.value = nil
        return value
    }
}
