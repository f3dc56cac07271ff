/// How transferctl writes sizes, rates and durations for people: binary units with one decimal
/// ("45.3 MiB"), rates per second, and clock-style times ("1:05", "1:02:03"). Pure functions.
enum ByteFormat {
    private static let units = ["KiB", "MiB", "GiB", "TiB", "PiB"]

    /// "512 B", "1.0 KiB", "45.3 MiB".
    static func bytes(_ count: Int64) -> String {
        if count < 1024 { return "\(max(count, 0)) B" }
        var value = Double(count) / 1024
        var unit = 0
        // 1023.96 KiB would print as "1024.0 KiB": move up before rounding gets there.
        while value >= 1023.95, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return "\(oneDecimal(value)) \(units[unit])"
    }

    /// "10.2 MiB/s".
    static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "0 B/s" }
        return bytes(Int64(bytesPerSecond.rounded())) + "/s"
    }

    /// "0:05", "12:34", "1:02:03"; "--:--" when unknown or absurd (more than 99 hours).
    static func clock(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0, seconds < 99 * 3600 else { return "--:--" }
        let whole = Int(seconds.rounded(.up))
        let hours = whole / 3600, minutes = (whole % 3600) / 60, secs = whole % 60
        if hours > 0 { return "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" }
        return "\(minutes):\(twoDigits(secs))"
    }

    /// 45.25 -> "45.3" (no Foundation formatter: transferctl imports FoundationEssentials only).
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// A rate as curl's --limit-rate takes it: bytes, or a number with K, M or G (powers of
    /// 1024, case-insensitive, fractions allowed: "1.5M"). nil when malformed or not positive.
    static func parseRate(_ text: String) -> Int64? {
        var digits = Substring(text.trimmingSpaces)
        var multiplier: Double = 1
        switch digits.last?.lowercased() {
        case "k": multiplier = 1024
        case "m": multiplier = 1024 * 1024
        case "g": multiplier = 1024 * 1024 * 1024
        default: break
        }
        if multiplier != 1 { digits = digits.dropLast() }
        guard let number = Double(digits), number.isFinite, number > 0 else { return nil }
        let rate = (number * multiplier).rounded()
        guard rate >= 1, rate <= 1e12 else { return nil }
        return Int64(rate)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
