internal import ArgumentParser

/// A task priority as the API takes it: 0.0 to 1.0, or `low`, `default`, `high`.
enum PriorityArgument: ExpressibleByArgument, Encodable, Equatable {
    case named(String)
    case value(Double)

    init?(argument: String) {
        if ["low", "default", "high"].contains(argument) { self = .named(argument) }
        else if let value = Double(argument), (0...1).contains(value) { self = .value(value) }
        else { return nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .named(let name): try container.encode(name)
        case .value(let value): try container.encode(value)
        }
    }
}

/// `--limit-rate`: bytes per second, with K, M or G as curl takes it.
struct RateArgument: ExpressibleByArgument, Equatable {
    var bytesPerSecond: Int64

    init?(argument: String) {
        guard let rate = ByteFormat.parseRate(argument) else { return nil }
        bytesPerSecond = rate
    }
}

/// `-H "Name: value"`, as curl takes it.
struct HeaderArgument: ExpressibleByArgument, Equatable {
    var name: String
    var value: String

    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":") else { return nil }
        name = argument[..<colon].trimmingSpaces
        value = argument[argument.index(after: colon)...].trimmingSpaces
        guard !name.isEmpty, !name.contains(" ") else { return nil }
    }

    /// The headers as the API's `headers` object; nil when there are none.
    static func object(_ headers: [HeaderArgument]) -> [String: String]? {
        guard !headers.isEmpty else { return nil }
        return Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }
}
