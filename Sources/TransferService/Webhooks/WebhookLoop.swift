internal import Curl
internal import FoundationEssentials
internal import Synchronization
internal import TransferModel
internal import TransferEngine

/// The webhook thread: one delivery in flight per session (so a session's events arrive in
/// order), many sessions at once on one multi handle, retries after a backoff. Not Sendable: it
/// exists only on that thread (handed over once by `WebhookDeliverer`).
final class WebhookLoop {
    private let multi: MultiHandle
    private let feed: any WebhookFeed
    private let policy: WebhookPolicy
    private var secrets: [String: String] = [:]
    /// Sessions that may have events to post.
    private var wanting: Set<String> = []
    private var inFlight: [String: (handle: EasyHandle, delivery: WebhookDelivery)] = [:]
    private var sessionsByHandle: [ObjectIdentifier: String] = [:]
    /// Failed deliveries waiting for their next try: attempts so far and when.
    private var retries: [String: (attempts: Int, at: Double)] = [:]
    /// Digest sessions gathering events until this time.
    private var digestDue: [String: Double] = [:]

    init(multi: MultiHandle, feed: any WebhookFeed, policy: WebhookPolicy) {
        self.multi = multi
        self.feed = feed
        self.policy = policy
    }

    func run(inbox: borrowing Mutex<WebhookInbox>) {
        while true {
            let (secrets, nudged, stopping) = inbox.withLock { inbox in
                defer { inbox.nudged.removeAll(keepingCapacity: true) }
                return (inbox.secrets, inbox.nudged, inbox.stopping)
            }
            if stopping { break }
            self.secrets = secrets
            wanting.formUnion(nudged)
            startDue(now: EngineLoop.now())
            multi.perform()
            for (easy, code) in multi.completions() { finished(easy, code) }
            multi.poll(timeoutMilliseconds: nextWake(now: EngineLoop.now()))
        }
        for entry in inFlight.values { multi.remove(entry.handle) }
        inFlight.removeAll()
        multi.close()
    }

    /// Starts a delivery for every session that wants one and is not in flight, waiting out a
    /// retry or gathering a digest.
    private func startDue(now: Double) {
        for session in wanting where inFlight[session] == nil {
            if let retry = retries[session], retry.at > now { continue }
            guard let secret = secrets[session] else { wanting.remove(session); continue }
            let mode = feed.webhookMode(session: session)
            if mode == .digest, retries[session] == nil {
                // Let the events of the next moment join the first one's digest.
                let due = digestDue[session] ?? (now + policy.digestInterval)
                digestDue[session] = due
                if due > now { continue }
            }
            guard let delivery = feed.webhookBatch(session: session, secret: secret, limit: mode == .digest ? policy.digestLimit : 1) else {
                wanting.remove(session)
                digestDue[session] = nil
                continue
            }
            digestDue[session] = nil
            start(delivery)
        }
    }

    private func start(_ delivery: WebhookDelivery) {
        do {
            let handle = try EasyHandle()
            let body = delivery.body()
            let timestamp = Int(Date().timeIntervalSince1970)
            try handle.set(.url(delivery.url))
            try handle.set(.allowedProtocols("http,https"))
            try handle.set(.followRedirects(false))
            try handle.set(.body(body))
            try handle.set(.timeoutMilliseconds(Int(policy.timeout * 1000)))
            try handle.set(.connectTimeoutMilliseconds(Int(policy.timeout * 1000)))
            try handle.set(.userAgent("transferd-webhook/0.1"))
            // Direct, whatever http_proxy says in the daemon's environment (as tasks without a
            // proxy dictionary): its connection is then put to the network policy's gate.
            try handle.set(.proxy(""))
            try handle.set(.noProxy(""))
            try handle.set(.headers([
                "Content-Type: application/json",
                "\(WebhookSignature.header): \(WebhookSignature.value(body: body, secret: delivery.secret, timestamp: timestamp))",
                "X-Transferd-Session: \(delivery.sessionId)",
                "Expect:",
            ]))
            try multi.add(handle)
            inFlight[delivery.sessionId] = (handle, delivery)
            sessionsByHandle[ObjectIdentifier(handle)] = delivery.sessionId
        } catch {
            outcome(delivery, .failed("the delivery could not be started: \(error)"))
        }
    }

    private func finished(_ easy: EasyHandle, _ code: CurlCode) {
        guard let session = sessionsByHandle.removeValue(forKey: ObjectIdentifier(easy)),
              let entry = inFlight.removeValue(forKey: session) else { return }
        multi.remove(easy)
        let status = easy.responseCode
        if let refused = URLErrorMapping.policyError(code, easy) {
            // As an unreachable receiver, but given up at once: the policy says the same next time.
            feed.webhookConnectionRefused()
            outcome(entry.delivery, .failed(refused.message), final: true)
        } else if !code.isOK {
            outcome(entry.delivery, .failed(easy.errorMessage ?? code.description))
        } else if !(200..<300).contains(status) {
            outcome(entry.delivery, .failed("HTTP \(status)"))
        } else {
            outcome(entry.delivery, .delivered)
        }
    }

    /// Records a success (the cursor moves on), schedules a retry, or after the last attempt
    /// gives the delivery up (the cursor moves past it, the failure counted).
    /// `final`: no attempt is left, whatever `policy.maxAttempts` says.
    private func outcome(_ delivery: WebhookDelivery, _ result: WebhookAttemptResult, final: Bool = false) {
        let session = delivery.sessionId
        wanting.insert(session)
        switch result {
        case .delivered:
            retries[session] = nil
            feed.webhookAttempted(session: session, through: delivery.through, result: result, givenUp: false)
        case .failed:
            let attempts = (retries[session]?.attempts ?? 0) + 1
            if attempts >= policy.maxAttempts || final {
                retries[session] = nil
                feed.webhookAttempted(session: session, through: delivery.through, result: result, givenUp: true)
            } else {
                retries[session] = (attempts, EngineLoop.now() + policy.backoff.delay(attempt: attempts - 1))
                feed.webhookAttempted(session: session, through: delivery.through, result: result, givenUp: false)
            }
        }
    }

    /// Milliseconds until the next retry or digest is due (at most a second; 0 when a session
    /// is due now).
    private func nextWake(now: Double) -> Int {
        var wake = 1.0
        for session in wanting where inFlight[session] == nil {
            if let at = retries[session]?.at {
                wake = min(wake, at - now)
            } else if let due = digestDue[session] {
                wake = min(wake, due - now)
            } else {
                return 0  // a delivery just ended and more may wait: look again at once
            }
        }
        return max(0, Int((wake * 1000).rounded(.up)))
    }
}
