public import FoundationEssentials
public import JSONModel

/// What the daemon adds to the shared JSON value: a typed value in JSON form.
extension JSONValue {
    /// The JSON form of any Encodable value (used to put typed values into event fields).
    public init(encoding value: some Encodable) {
        do {
            let data = try JSONCoding.encoder.encode(value)
            self = try JSONCoding.decoder.decode(JSONValue.self, from: data)
        } catch {
            self = .null
        }
    }
}

/// The encoder and decoder every JSON surface uses: RFC 3339 dates, stable key order. Shared
/// instances: both types are Sendable and are never reconfigured after this.
public enum JSONCoding {
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
