/// A token bucket for one rate limit: `rate` bytes per second flow in by monotonic time, at most
/// `capacity` are held (a small burst, a tenth of a second of the rate), and taking may overdraw
/// it: libcurl hands over a whole received chunk or nothing, so a chunk taken with any token left
/// is paid back before the next one. Over any stretch of time the bytes taken stay within
/// rate × time + capacity + one chunk. A value, tested with a fake clock.
struct TokenBucket: Equatable {
    /// How much of a second's rate may be spent at once after an idle spell (also after a client
    /// suspended the transfer: unlike CURLOPT_MAX_RECV_SPEED_LARGE, which averages over the
    /// transfer and bursts to catch up after a pause).
    static let burstSeconds = 0.1

    private(set) var rate: Double
    private(set) var capacity: Double
    private(set) var tokens: Double
    private var updated: Double

    init(rate: Int, now: Double) {
        self.rate = Double(rate)
        capacity = max(1, Double(rate) * Self.burstSeconds)
        tokens = capacity
        updated = now
    }

    /// Adds what flowed in since the last refill.
    mutating func refill(now: Double) {
        guard now > updated else { return }
        tokens = min(capacity, tokens + (now - updated) * rate)
        updated = now
    }

    var hasTokens: Bool { tokens > 0 }

    mutating func take(_ bytes: Int) { tokens -= Double(bytes) }

    /// Seconds from the last refill until some token is back (0 when there is one now).
    var secondsUntilTokens: Double { tokens > 0 ? 0 : (1 - tokens) / rate }

    /// A new rate from now on; a debt is kept (paid back at the new rate), a surplus is capped.
    mutating func setRate(_ rate: Int, now: Double) {
        refill(now: now)
        self.rate = Double(rate)
        capacity = max(1, Double(rate) * Self.burstSeconds)
        tokens = min(tokens, capacity)
    }
}
