/// URLSessionTask.priority as an HTTP/2 stream weight (RFC 7540 5.3.2: 1 to 256), the hint
/// URLSession gives the host: 0.0 → 1, the default 0.5 → 129, 1.0 → 256.
enum StreamWeight {
    static func forPriority(_ priority: Double) -> Int {
        let clamped = priority.isFinite ? min(1, max(0, priority)) : 0.5
        return 1 + Int((clamped * 255).rounded())
    }
}
