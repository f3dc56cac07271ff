internal import FoundationEssentials
internal import Synchronization
internal import Logging
internal import TransferModel
internal import TransferStore

extension TransferService {
    /// At start: every stored secret goes back to the deliverer, which posts what each session's
    /// delivered cursor has not reached yet (deliveries resume after a restart).
    func loadWebhooks() throws {
        let secrets = try store.loadWebhookSecrets()
        let sessions = state.withLock { s in s.sessions.values.filter { $0.webhook != nil }.map(\.id) }
        for id in sessions {
            if let secret = secrets[id] { webhooks.register(session: id, secret: secret) }
        }
    }

    /// The session's webhook mode (nil: it has none).
    func webhookMode(session id: String) -> WebhookMode? {
        state.withLock { $0.sessions[id]?.webhook?.mode }
    }

    /// The next events to post to the session's webhook, after its delivered cursor; nil when
    /// there are none.
    func webhookBatch(session id: String, secret: String, limit: Int) -> WebhookDelivery? {
        if feedIsShared(session: id) { return clusterWebhookBatch(session: id, secret: secret, limit: limit) }
        return state.withLock { s in
            guard let webhook = s.sessions[id]?.webhook else { return nil }
            let events = s.events[id]?.page(after: webhook.deliveredThrough, limit: limit) ?? []
            guard !events.isEmpty else { return nil }
            return WebhookDelivery(sessionId: id, url: webhook.url, secret: secret, events: events)
        }
    }

    /// Records an attempt: a success or a given-up delivery moves the cursor past its events
    /// (stored for recorded sessions, so a restart resumes after it); a failure is shown as
    /// `lastError` either way.
    func webhookAttempted(session id: String, through seq: Int, result: WebhookAttemptResult, givenUp: Bool) {
        metrics.webhookDeliveries.increment(result == .delivered ? "delivered" : givenUp ? "given_up" : "failed")
        state.withLock { s in
            guard var session = s.sessions[id], var webhook = session.webhook else { return }
            switch result {
            case .delivered:
                webhook.deliveredThrough = max(webhook.deliveredThrough, seq)
                webhook.lastDeliveredAt = Date()
            case .failed(let message):
                webhook.lastError = message
                if givenUp {
                    webhook.deliveredThrough = max(webhook.deliveredThrough, seq)
                    webhook.failedDeliveries += 1
                }
            }
            session.webhook = webhook
            saveSession(&s, session)
        }
        if feedIsShared(session: id), givenUp || result == .delivered { clusterWebhookAdvanced(session: id, through: seq) }
        if givenUp, case .failed(let message) = result {
            logger.info("webhook delivery given up", metadata: ["transfer.session.id": "\(id)", "webhook.through": "\(seq)", "webhook.error": "\(message)"])
        }
    }
}
