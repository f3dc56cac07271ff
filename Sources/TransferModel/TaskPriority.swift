/// URLSessionTask.priority: 0.0 to 1.0; the names low (0.25), default (0.5) and high (0.75) are
/// accepted on input as Apple's constants.
public struct TaskPriority: Codable, Sendable, Equatable, Comparable {
    public var value: Double

    public static let low = TaskPriority(value: 0.25)
    public static let `default` = TaskPriority(value: 0.5)
    public static let high = TaskPriority(value: 0.75)

    public init(value: Double) { self.value = value }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let name = try? container.decode(String.self) {
            switch name {
            case "low": value = 0.25
            case "default": value = 0.5
            case "high": value = 0.75
            default: throw InputError.invalidValue(field: fieldPath(decoder.codingPath), message: "must be a number from 0 to 1 or one of low, default, high")
            }
            return
        }
        value = try container.decode(Double.self)
        guard value.isFinite, (0...1).contains(value) else {
            throw InputError.invalidValue(field: fieldPath(decoder.codingPath), message: "must be between 0.0 and 1.0")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public static func < (a: TaskPriority, b: TaskPriority) -> Bool { a.value < b.value }
}
