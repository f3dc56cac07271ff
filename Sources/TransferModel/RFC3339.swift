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
    static func append(_ date: Date, milliseconds: Bool, to bytes: inout JSONBytes) -> Bool {
        withText(of: date, milliseconds: milliseconds) { bytes.append($0) }
    }

    /// Hands `date`'s digits to `body` from the stack; false, without calling it, where `append` is.
    private static func withText(of date: Date, milliseconds: Bool, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        let since1970 = date.timeIntervalSince1970
        guard since1970.isFinite else { return false }
        let whole = since1970.rounded(.down)
        guard abs(whole) < 1e15 else { return false }
        var seconds = time_t(whole)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil, (1583...9999).contains(parts.tm_year + 1900) else { return false }
        // Put together on the stack and appended once, with constant divisors (a division by a
        // variable divisor per digit, and an append per byte, were 3% of the store writer).
        let millis = milliseconds ? min(999, Int(((since1970 - whole) * 1000).rounded(.down))) : 0
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { text in
            let year = Int(parts.tm_year) + 1900
            text[0] = digit(year / 1000); text[1] = digit(year / 100 % 10); text[2] = digit(year / 10 % 10); text[3] = digit(year % 10)
            text[4] = UInt8(ascii: "-")
            two(Int(parts.tm_mon) + 1, text, at: 5)
            text[7] = UInt8(ascii: "-")
            two(Int(parts.tm_mday), text, at: 8)
            text[10] = UInt8(ascii: "T")
            two(Int(parts.tm_hour), text, at: 11)
            text[13] = UInt8(ascii: ":")
            two(Int(parts.tm_min), text, at: 14)
            text[16] = UInt8(ascii: ":")
            two(Int(parts.tm_sec), text, at: 17)
            var end = 19
            if milliseconds {
                text[19] = UInt8(ascii: ".")
                text[20] = digit(millis / 100); text[21] = digit(millis / 10 % 10); text[22] = digit(millis % 10)
                end = 23
            }
            text[end] = UInt8(ascii: "Z")
            body(UnsafeBufferPointer(rebasing: text[...end]))
        }
        return true
    }

    /// `2025-01-02T03:04:05.678Z`, as `Date.ISO8601FormatStyle(includingFractionalSeconds: true)`.
    public static func millisecondsText(_ date: Date) -> String {
        var text = ""
        guard withText(of: date, milliseconds: true, { text = String(decoding: $0, as: UTF8.self) }) else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        return text
    }

    private static func digit(_ value: Int) -> UInt8 { UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value) }

    private static func two(_ value: Int, _ text: UnsafeMutableBufferPointer<UInt8>, at index: Int) {
        text[index] = digit(value / 10)
        text[index + 1] = digit(value % 10)
    }
}
