internal import FoundationEssentials

/// UTC timestamps for log lines, RFC 3339 with milliseconds: `2026-05-01T09:30:00.123Z`.
enum LogTimestamp {
    static func now() -> String { format(secondsSince1970: Date().timeIntervalSince1970) }

    static func format(secondsSince1970 time: Double) -> String {
        let milliseconds = Int64((time * 1000).rounded(.down))
        let days = Int(milliseconds.floorDivided(by: 86_400_000))
        let ofDay = Int(milliseconds - Int64(days) * 86_400_000)
        let (year, month, day) = civil(daysSince1970: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(ofDay / 3_600_000, 2)):\(pad(ofDay / 60_000 % 60, 2)):\(pad(ofDay / 1000 % 60, 2)).\(pad(ofDay % 1000, 3))Z"
    }

    /// Year, month, day of a day number (Howard Hinnant's days_from_civil, inverted).
    private static func civil(daysSince1970 days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
