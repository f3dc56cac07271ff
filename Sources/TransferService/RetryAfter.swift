internal import FoundationEssentials
internal import TransferModel

/// The `Retry-After` response header (RFC 9110 10.2.3): how long a client should wait before
/// asking again, as delta-seconds ("120") or as an HTTP-date. Servers send it with 503, 429 and
/// 3xx; a retry honours it as the least wait.
enum RetryAfter {
    /// Seconds from `now` the header asks to wait (0 for a date in the past); nil when the value
    /// is neither form.
    static func seconds(_ value: String, now: Date) -> Double? {
        let text = value.trimmed()
        guard !text.isEmpty else { return nil }
        if text.allSatisfy(\.isASCIIDigit) {
            // More digits than any sensible wait: read as "a very long time", not as garbage.
            return Double(text.count > 12 ? 999_999_999_999 : Int(text) ?? 0)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
