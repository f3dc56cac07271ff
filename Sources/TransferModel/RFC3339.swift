internal import Glibc
public import FoundationEssentials

/// RFC 3339 timestamps in UTC, written from `gmtime_r`: `2025-01-02T03:04:05Z`, or with the
/// milliseconds truncated (`.678Z`) as `Date.ISO8601FormatStyle(includingFractionalSeconds:)`
/// writes them. Why: Foundation's style goes through a Calendar and was 1.5% of a small
/// download's CPU (a task's metrics hold about ten dates; checked against Foundation over two
/// million instants, `RFC3339Tests`).
public enum RFC3339 {
    /// Appends `date`'s digits (no quotes); false, with nothing appended, for a year outside
    /// 1583...9999 (the caller falls back to Foundation, whose calendar is Julian before the
    /// Gregorian reform of October 1582, where gmtime_r's is proleptic Gregorian).
    static func append(_ date: Date, milliseconds: Bool, to bytes: inout [UInt8]) -> Bool {
        let since1970 = date.timeIntervalSince1970
        guard since1970.isFinite else { return false }
        let whole = since1970.rounded(.down)
        guard abs(whole) < 1e15 else { return false }
        var seconds = time_t(whole)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil, (1583...9999).contains(parts.tm_year + 1900) else { return false }
        digits(Int(parts.tm_year) + 1900, 4, &bytes); bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2, &bytes); bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2, &bytes); bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2, &bytes); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2, &bytes); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2, &bytes)
        if milliseconds {
            bytes.append(UInt8(ascii: "."))
            digits(min(999, Int(((since1970 - whole) * 1000).rounded(.down))), 3, &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
        return true
    }

    /// `2025-01-02T03:04:05.678Z`, as `Date.ISO8601FormatStyle(includingFractionalSeconds: true)`.
    public static func millisecondsText(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        guard append(date, milliseconds: true, to: &bytes) else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func digits(_ value: Int, _ count: Int, _ bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
