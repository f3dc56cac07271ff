internal import Curl
internal import Synchronization
internal import TransferEngine

/// Posts sessions' events to their webhooks, on a thread of its own with its own curl multi
/// handle: a slow or dead receiver never holds a transfer, the engine thread or the service lock
/// (the loop takes the lock only to read a batch and to record an outcome). Owned by
/// `TransferService` (as its `WebhookFeed`); other threads only register secrets and nudge it.
final class WebhookDeliverer: Sendable {
    private let thread: MultiThread<WebhookInbox>
    /// The sessions registered (read by other threads: a cluster node learns the others' webhooks).
    private let registered = Mutex<Set<String>>([])

    /// `connectionGate`: every delivery's connection is put to it (`NetworkPolicy.connectionGate`).
    init(connectionGate: ConnectionGate? = nil) throws {
        thread = MultiThread(try MultiHandle(connectionGate: connectionGate), inbox: WebhookInbox())
    }

    /// A session posts its events with `secret` (at creation, and for every stored one at start).
    func register(session: String, secret: String) {
        registered.withLock { _ = $0.insert(session) }
        thread.post {
            $0.secrets[session] = secret
            $0.nudged.insert(session)
            return true
        }
    }

    func isRegistered(session: String) -> Bool { registered.withLock { $0.contains(session) } }

    /// The session has new events (called under the service lock: never blocks).
    func nudge(session: String) {
        thread.post { inbox in
            guard inbox.secrets[session] != nil else { return false }
            inbox.nudged.insert(session)
            return true
        }
    }

    func start(feed: any WebhookFeed, policy: WebhookPolicy) {
        thread.start { [thread] multi in WebhookLoop(multi: multi, feed: feed, policy: policy).run(inbox: thread.inbox) }
    }

    /// Ends the thread: deliveries in flight are dropped (their events stay undelivered and go
    /// out again after a restart). Waits up to `timeout` seconds.
    func stop(timeout: Double) {
        thread.stop(timeout: timeout)
    }
}

/// What other threads hand the webhook thread.
struct WebhookInbox: MultiThreadInbox {
    var secrets: [String: String] = [:]
    /// Sessions with new events since the thread last looked.
    var nudged: Set<String> = []
    var stopping = false
}
