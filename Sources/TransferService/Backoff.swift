/// Exponential backoff with jitter: the n-th wait (from 0) is drawn from
/// [d/2, d] with d = min(cap, base · 2ⁿ) ("equal jitter").
///
/// Jitter spreads the retries of many tasks that failed together (a server restart) so they do
/// not come back in one burst. Equal jitter rather than full jitter ([0, d]): a wait is never
/// shorter than the one before it until the cap, so a struggling server always gets more room,
/// and a retry never follows its failure at once.
public struct Backoff: Sendable, Equatable {
    /// Seconds: the first wait is between base/2 and base.
    public var base: Double
    /// Seconds: no wait is longer.
    public var cap: Double

    public init(base: Double, cap: Double) {
        precondition(base > 0 && cap >= base, "a backoff needs 0 < base <= cap")
        self.base = base
        self.cap = cap
    }

    /// The wait before retry number `attempt` (0 for the first).
    public func delay(attempt: Int, using random: inout some RandomNumberGenerator) -> Double {
        let ceiling = ceiling(attempt: attempt)
        return ceiling / 2 + Double.random(in: 0...(ceiling / 2), using: &random)
    }

    public func delay(attempt: Int) -> Double {
        var random = SystemRandomNumberGenerator()
        return delay(attempt: attempt, using: &random)
    }

    /// min(cap, base · 2^attempt), without overflowing for large attempts.
    func ceiling(attempt: Int) -> Double {
        min(cap, base * Double(sign: .plus, exponent: min(max(0, attempt), 60), significand: 1))
    }
}
