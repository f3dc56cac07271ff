/// How webhook deliveries are made: their timeout, retries and digest batching.
public struct WebhookPolicy: Sendable, Equatable {
    /// Tries per delivery; after the last failure its events are skipped and the failure counted.
    public var maxAttempts = 8
    /// The wait before retry n, drawn from [d/2, d], d = min(cap, base · 2ⁿ) seconds.
    public var backoff = Backoff(base: 1, cap: 300)
    /// The longest one POST may take, connecting included, in seconds.
    public var timeout = 10.0
    /// Digest mode: how long events gather after the first one before they are posted.
    public var digestInterval = 1.0
    /// The most events one digest carries (more follow in the next one).
    public var digestLimit = 500

    public init() {}
}
