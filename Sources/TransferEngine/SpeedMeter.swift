/// Bytes per second over a sliding window of recent samples (5 s), so the speed reflects the
/// present and not the whole transfer's average.
struct SpeedMeter {
    private var samples: [(time: Double, total: Int)] = []
    let window: Double

    init(window: Double = 5) { self.window = window }

    mutating func record(total: Int, at time: Double) {
        samples.append((time, total))
        while let first = samples.first, time - first.time > window, samples.count > 2 { samples.removeFirst() }
    }

    var bytesPerSecond: Double {
        guard let first = samples.first, let last = samples.last, last.time > first.time else { return 0 }
        return Double(last.total - first.total) / (last.time - first.time)
    }

    mutating func reset() { samples.removeAll() }
}
