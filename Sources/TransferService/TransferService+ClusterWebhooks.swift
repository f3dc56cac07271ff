internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// Webhooks in a cluster (docs/cluster.md): a session's events are every node's, so they are
/// posted from the store's feed, in its numbers, after a cursor the nodes share, by one node at
/// a time (`ClusterCoordinator.takeWebhook`, a lease as for tasks: another node takes over once
/// the poster stops renewing). Every node learns every session's webhook (at start, and from a
/// session's signal) and is nudged by every commit of the session's events (the feed signal);
/// the nodes that find another one posting let it be. Each lease round nudges the sessions
/// that are behind with no node posting (their node stopped mid-way).
///
/// As on a daemon alone, the URL is the session owner's and every connection to it passes the
/// network policy (`WebhookDeliverer`).
extension TransferService {
    /// The next delivery of session `id`, if this node posts it now: the store's events after
    /// the shared cursor. Nothing to post lets the session go for any node to take.
    func clusterWebhookBatch(session id: String, secret: String, limit: Int) -> WebhookDelivery? {
        guard let coordinator = store.coordinator, let node = membership.nodeId,
              let url = state.withLock({ $0.sessions[id]?.webhook?.url }) else { return nil }
        do {
            guard let cursor = try coordinator.takeWebhook(session: id, node: node, leaseSeconds: configuration.leaseTimeout) else { return nil }
            let events = try coordinator.events(session: id, after: cursor, limit: limit).prefix(limit)
            guard !events.isEmpty else {
                try coordinator.releaseWebhook(session: id, node: node)
                return nil
            }
            return WebhookDelivery(sessionId: id, url: url, secret: secret, events: Array(events))
        } catch {
            logger.warning("a webhook's events cannot be read from the store", metadata: ["transfer.session.id": "\(id)", "error": "\(error)"])
            return nil
        }
    }

    /// A delivery was posted (or given up): the shared cursor moves past it.
    func clusterWebhookAdvanced(session id: String, through seq: Int) {
        guard let coordinator = store.coordinator, let node = membership.nodeId else { return }
        do {
            if try !coordinator.advanceWebhook(session: id, node: node, through: seq) {
                logger.info("another node took over a webhook mid-delivery", metadata: ["transfer.session.id": "\(id)"])
            }
        } catch {
            // The next poster starts from the older cursor: these events go out again.
            logger.warning("a webhook's cursor cannot be stored", metadata: ["transfer.session.id": "\(id)", "error": "\(error)"])
        }
    }

    /// Registers the webhook of session `id` (made on another node) with this node's deliverer.
    func learnWebhook(_ id: String) {
        guard let coordinator = store.coordinator, !webhooks.isRegistered(session: id) else { return }
        do {
            guard let secret = try coordinator.webhookSecret(session: id) else { return }
            try learnSession(id)
            guard state.withLock({ $0.sessions[id]?.webhook != nil }) else { return }
            webhooks.register(session: id, secret: secret)
        } catch {
            logger.warning("another node's webhook cannot be read", metadata: ["transfer.session.id": "\(id)", "error": "\(error)"])
        }
    }

    /// New events of session `id` were committed (by any node).
    func nudgeWebhook(_ id: String) { webhooks.nudge(session: id) }

    /// The sessions whose webhook is behind with no node posting it: learned and nudged.
    func sweepWebhooks() throws {
        guard let coordinator = store.coordinator else { return }
        for id in try coordinator.webhooksBehind() {
            learnWebhook(id)
            webhooks.nudge(session: id)
        }
    }
}
