public import Foundation

/// A complete response read by ``TestHTTPClient``.
public struct TestHTTPResponse: Sendable, CustomStringConvertible {
    /// The status code, e.g. 200.
    public let status: Int
    /// The reason phrase as sent (may be empty).
    public let reason: String
    /// Header fields keyed by the name as first sent; repeated fields joined with ", ".
    /// Use ``header(_:)`` for a case-insensitive lookup.
    public let headers: [String: String]
    /// The body, with chunked framing removed.
    public let body: Data

    public init(status: Int, reason: String = "", headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// The value of the header field `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        HeaderLookup.value(name, in: headers)
    }

    /// The body decoded as UTF-8 (invalid bytes replaced).
    public var text: String {
        String(decoding: body, as: UTF8.self)
    }

    /// The body parsed with `JSONSerialization` (fragments allowed).
    public func json() throws -> Any {
        try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
    }

    /// The body parsed as a JSON object; throws if it is another JSON value.
    public func jsonObject() throws -> [String: Any] {
        guard let object = try json() as? [String: Any] else {
            throw SocketError.malformed("body is not a JSON object: \(text.prefix(200))")
        }
        return object
    }

    /// The body decoded as `type` with `decoder`.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: body)
    }

    public var description: String {
        "\(status) \(reason) (\(body.count) body bytes): \(text.prefix(500))"
    }
}
