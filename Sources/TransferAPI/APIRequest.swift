internal import FoundationEssentials
public import HTTPServer
internal import TransferModel
internal import TransferService

/// A request as route handlers see it: the HTTP request, its path parameters, and the identity
/// of the client (the token fingerprint that owns what it creates, its role and name).
public struct APIRequest: Sendable {
    public let http: HTTPRequest
    public let parameters: [String: String]
    public let identity: Identity

    public init(http: HTTPRequest, parameters: [String: String] = [:], identity: Identity = .anonymous) {
        self.http = http
        self.parameters = parameters
        self.identity = identity
    }

    /// The owner of what this request creates and the only one whose things it sees.
    public var owner: String? { identity.owner }

    /// Decodes the JSON body. An empty body decodes as `{}` (every field optional).
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if !http.body.isEmpty, !bodyIsJSON {
            throw APIError(415, "unsupported_media_type", "send the body as application/json")
        }
        if Self.hasTrailingComma(http.body) {
            throw APIError(400, "malformed_json", "the body is not valid JSON: a comma before } or ]")
        }
        return try JSONCoding.decoder.decode(T.self, from: http.body.isEmpty ? Data("{}".utf8) : http.body)
    }

    /// Whether the body is to be read as JSON: it says application/json, or it is JSON sent
    /// as `application/x-www-form-urlencoded`, what `curl -d` says when not told otherwise (an
    /// object or array: no form field starts with `{` or `[`). aria2's JSON-RPC and many JSON
    /// APIs take it the same way; a real form (`priority=1`) is still refused with 415.
    /// Read off the header's bytes, no allocation: every single POST asks.
    var bodyIsJSON: Bool {
        guard let value = http.headers["Content-Type"] else { return false }
        var type = value.utf8.prefix { $0 != UInt8(ascii: ";") }.drop { $0 == UInt8(ascii: " ") }
        while type.last == UInt8(ascii: " ") { type = type.dropLast() }
        let mediaType = Substring(type)
        if mediaType.equalsIgnoringASCIICase("application/json") { return true }
        guard mediaType.equalsIgnoringASCIICase("application/x-www-form-urlencoded") else { return false }
        let first = http.body.first { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\t") }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// Whether a comma is followed by `}` or `]` outside strings: JSON forbids it, but
    /// FoundationEssentials' JSONDecoder accepts it.
    static func hasTrailingComma(_ body: Data) -> Bool {
        var inString = false, escaped = false, previous: UInt8 = 0
        for byte in body {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if previous == UInt8(ascii: ",") { return true }
            default: break
            }
            previous = byte
        }
        return false
    }

    func parameter(_ name: String) -> String { parameters[name] ?? "" }

    /// The integer path parameter `name` (a task id); anything else is an unknown task.
    func taskId() throws -> Int {
        guard let id = Int(parameter("tid")), id > 0 else { throw APIError.notFound("no task \(parameter("tid"))") }
        return id
    }

    /// `limit` (1...1000, default 100).
    func limit() throws -> Int {
        guard let text = http.query["limit"] else { return 100 }
        guard let value = Int(text), (1...1000).contains(value) else {
            throw APIError(400, "invalid_query", "limit must be an integer from 1 to 1000", field: "limit")
        }
        return value
    }

    /// `kind` (a session kind), nil when not given.
    func sessionKind() throws -> SessionKind? {
        guard let text = http.query["kind"] else { return nil }
        guard let kind = SessionKind(rawValue: text) else {
            throw APIError(400, "invalid_query", "kind must be one of default, ephemeral, background", field: "kind")
        }
        return kind
    }

    /// `after` (an integer >= 0, default 0).
    func after() throws -> Int {
        guard let text = http.query["after"] else { return 0 }
        guard let value = Int(text), value >= 0 else {
            throw APIError(400, "invalid_query", "after must be an integer of 0 or more", field: "after")
        }
        return value
    }

    /// `types`: the event types an events read wants, comma-separated (default: all); `task`: the
    /// one task whose events it wants (default: every task's and the session's own).
    func eventFilter() throws -> EventFilter {
        var types: Set<EventType>?
        if let text = http.query["types"] {
            var named = Set<EventType>()
            for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let type = EventType(rawValue: String(name)) else {
                    throw APIError(400, "invalid_query", "types must be event types separated by commas, such as didCompleteWithError; '\(name)' is not one", field: "types")
                }
                named.insert(type)
            }
            types = named
        }
        var taskId: Int?
        if let text = http.query["task"] {
            guard let value = Int(text), value > 0 else {
                throw APIError(400, "invalid_query", "task must be a task id (a positive integer)", field: "task")
            }
            taskId = value
        }
        return EventFilter(types: types, taskId: taskId)
    }

    /// A `true`/`false` query parameter (absent: false).
    func flag(_ name: String) throws -> Bool {
        switch http.query[name] {
        case nil, "false": return false
        case "true": return true
        default: throw APIError(400, "invalid_query", "\(name) must be true or false", field: name)
        }
    }

    /// `wait` in seconds (>= 0, default 0; the service caps it).
    func wait() throws -> Double {
        guard let text = http.query["wait"] else { return 0 }
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw APIError(400, "invalid_query", "wait must be a number of seconds of 0 or more", field: "wait")
        }
        return value
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
