internal import TransferModel

/// Bytes moved per scheduling class, and the rates over the last few seconds (`GET /v1/stats`,
/// aria2's getGlobalStat per class). Counted from the engine's coalesced progress reports;
/// sampled once a checkpoint (every second), so a rate spans 2 to 3 s.
struct ClassRates: Sendable {
    struct Totals: Sendable, Equatable {
        var received = 0
        var sent = 0
    }

    private(set) var totals: [SchedulingClass: Totals] = [:]
    /// (monotonic seconds, totals then), oldest first; a few seconds' worth.
    private var samples: [(time: Double, totals: [SchedulingClass: Totals])] = []
    static let window = 2.0

    mutating func received(_ bytes: Int, _ schedulingClass: SchedulingClass) { totals[schedulingClass, default: Totals()].received += bytes }
    mutating func sent(_ bytes: Int, _ schedulingClass: SchedulingClass) { totals[schedulingClass, default: Totals()].sent += bytes }

    mutating func sample(at now: Double) {
        samples.append((now, totals))
        // Keep the newest sample at least `window` old, and everything after it.
        while samples.count > 2, now - samples[1].time >= Self.window { samples.removeFirst() }
    }

    /// Bytes per second received and sent by `schedulingClass` since the sample about `window` ago.
    func rates(_ schedulingClass: SchedulingClass, now: Double) -> (received: Double, sent: Double) {
        guard let base = samples.first, now - base.time > 0.2 else { return (0, 0) }
        let then = base.totals[schedulingClass] ?? Totals()
        let current = totals[schedulingClass] ?? Totals()
        let elapsed = now - base.time
        return (Double(current.received - then.received) / elapsed, Double(current.sent - then.sent) / elapsed)
    }
}
