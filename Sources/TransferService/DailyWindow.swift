public import FoundationEssentials

/// A time window that recurs every day, in UTC ("22:00-06:00" wraps past midnight): when
/// discretionary tasks may start.
public struct DailyWindow: Sendable, Equatable {
    /// Minutes after midnight UTC.
    public let start: Int
    public let end: Int

    /// Parses "HH:MM-HH:MM"; nil when malformed or empty (start equal to end).
    public init?(_ text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let start = Self.minutes(parts[0]), let end = Self.minutes(parts[1]), start != end else { return nil }
        self.start = start
        self.end = end
    }

    public func contains(_ date: Date) -> Bool {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let minute = ((seconds % 86_400) + 86_400) % 86_400 / 60
        return start < end ? (start..<end).contains(minute) : (minute >= start || minute < end)
    }

    private static func minutes(_ text: Substring) -> Int? {
        let fields = text.split(separator: ":")
        guard fields.count == 2, fields[0].count == 2, fields[1].count == 2,
              let hours = Int(fields[0]), let minutes = Int(fields[1]),
              (0..<24).contains(hours), (0..<60).contains(minutes) else { return nil }
        return hours * 60 + minutes
    }
}
