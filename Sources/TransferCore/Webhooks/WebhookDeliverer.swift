internal import Curl
internal import Dispatch
internal import Synchronization

/// Posts sessions' events to their webhooks, on a thread of its own with its own curl multi
/// handle: a slow or dead receiver never holds a transfer, the engine thread or the service lock
/// (the loop takes the lock only to read a batch and to record an outcome). Owned by
/// `TransferService`; other threads only register secrets and nudge it.
final class WebhookDeliverer: Sendable {
    private let inbox = Mutex(WebhookInbox())
    private let waker: MultiWaker
    private let multi: HandOff<MultiHandle>
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    init() throws {
        let multi = try MultiHandle()
        waker = multi.waker
        self.multi = HandOff(multi)
    }

    /// A session posts its events with `secret` (at creation, and for every stored one at start).
    func register(session: String, secret: String) {
        inbox.withLock {
            $0.secrets[session] = secret
            $0.nudged.insert(session)
        }
        waker.wakeup()
    }

    /// The session has new events (called under the service lock: never blocks).
    func nudge(session: String) {
        let known = inbox.withLock { inbox in
            guard inbox.secrets[session] != nil else { return false }
            inbox.nudged.insert(session)
            return true
        }
        if known { waker.wakeup() }
    }

    func start(service: TransferService, policy: WebhookPolicy) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        DedicatedThread.start { [self] in
            WebhookLoop(multi: multi.take(), service: service, policy: policy).run(inbox: inbox)
            finished.signal()
        }
    }

    /// Ends the thread: deliveries in flight are dropped (their events stay undelivered and go
    /// out again after a restart). Waits up to `timeout` seconds.
    func stop(timeout: Double) {
        guard started.load(ordering: .relaxed) else { return }
        inbox.withLock { $0.stopping = true }
        waker.wakeup()
        if finished.wait(timeout: .now() + timeout) == .success { finished.signal() }
    }
}

/// What other threads hand the webhook thread.
struct WebhookInbox: Sendable {
    var secrets: [String: String] = [:]
    /// Sessions with new events since the thread last looked.
    var nudged: Set<String> = []
    var stopping = false
}
