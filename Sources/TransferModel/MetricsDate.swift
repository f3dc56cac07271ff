public import FoundationEssentials

/// A point in time in task metrics, served as RFC 3339 with milliseconds
/// ("2025-01-02T03:04:05.678Z"). Elsewhere the API's timestamps are whole seconds; the phases
/// of one request are milliseconds apart, so metrics need the fraction.
public struct MetricsDate: Codable, Sendable, Equatable, Comparable {
    public var date: Date

    public init(_ date: Date) { self.date = date }

    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        date = try Self.style.parse(text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// The served form.
    public var text: String { RFC3339.millisecondsText(date) }

    public static func < (a: MetricsDate, b: MetricsDate) -> Bool { a.date < b.date }
}
