internal import FoundationEssentials
internal import JSONModel

/// What transferctl prints of any JSON value (the type is shared with the daemon, JSONModel).
extension JSONValue {
    /// The value as one line of JSON, keys sorted.
    var compact: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A string's text or the value's JSON (for table cells).
    var text: String {
        if case .string(let value) = self { return value }
        return compact
    }
}
