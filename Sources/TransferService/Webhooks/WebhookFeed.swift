internal import TransferModel

/// What the webhook thread asks of the service: which sessions post, what each delivery carries,
/// and the outcome of each try. `TransferService` implements it; the webhook loop holds only
/// this, so the deliverer depends on a feed and not on the service that owns it.
protocol WebhookFeed: AnyObject, Sendable {
    /// How `session` wants its events posted, or nil when it has no webhook (any more).
    func webhookMode(session id: String) -> WebhookMode?
    /// The next delivery of `session`: at most `limit` events after the acknowledged ones.
    func webhookBatch(session id: String, secret: String, limit: Int) -> WebhookDelivery?
    /// A try ended: acknowledges through `seq` on success, records the failure otherwise.
    func webhookAttempted(session id: String, through seq: Int, result: WebhookAttemptResult, givenUp: Bool)
    /// The network policy refused a webhook connection (counted in the daemon's metrics).
    func webhookConnectionRefused()
}

extension TransferService: WebhookFeed {
    func webhookConnectionRefused() { metrics.networkPolicyRefused(.webhook) }
}
