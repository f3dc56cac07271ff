/// A request that is well-formed JSON but not acceptable: raised while decoding or validating
/// client input, rendered by the API layer as 400 or 422 with the offending field.
public enum InputError: Error, Sendable, Equatable {
    /// A field name the schema does not have (a typo must be reported, not ignored): 400.
    case unknownField(String)
    /// A value outside what the field allows (unknown enum value, out of range): 422.
    case invalidValue(field: String, message: String)
    /// Designed but not built yet: 422.
    case notImplemented(field: String?, message: String)
    /// Refused outright, e.g. a destination that leaves the downloads root: 400 with `code`.
    case refused(field: String, code: String, message: String)
    /// More items than one request may carry (a batch over its limit): 413.
    case tooLarge(field: String, message: String)
}

/// A coding key for any name, used to see every key a JSON object really has.
public struct AnyCodingKey: CodingKey, Sendable {
    public let stringValue: String
    public let intValue: Int?
    public init(stringValue: String) { self.stringValue = stringValue; self.intValue = nil }
    public init(intValue: Int) { self.stringValue = String(intValue); self.intValue = intValue }
}

/// The dotted path of a coding path, e.g. "request.body.text" or "items[2]".
public func fieldPath(_ path: [any CodingKey]) -> String {
    var result = ""
    for key in path {
        if let index = key.intValue { result += "[\(index)]" }
        else { result += result.isEmpty ? key.stringValue : "." + key.stringValue }
    }
    return result
}

extension Decoder {
    /// Throws `InputError.unknownField` for the first key of this object that `Keys` lacks.
    public func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        // On every object of every request: no Set, no sort (they were a quarter of the CPU of
        // a batch). The smallest unknown name is reported, whatever the object's key order.
        var unknown: String?
        for key in try self.container(keyedBy: AnyCodingKey.self).allKeys where Keys(stringValue: key.stringValue) == nil {
            if unknown.map({ key.stringValue < $0 }) ?? true { unknown = key.stringValue }
        }
        if let unknown {
            throw InputError.unknownField(fieldPath(codingPath + [AnyCodingKey(stringValue: unknown)]))
        }
    }

    /// The dotted path of `key` inside the object being decoded.
    public func path(_ key: some CodingKey) -> String { fieldPath(codingPath + [key]) }
}
