/// Reading a `responseDisposition` from a request body: every mistake is a 400
/// `invalid_response_disposition` naming the field, unknown keys and `null` are refused. Stored
/// records are read the same way (they were checked on the way in).
extension ResponseDisposition {
    static let errorCode = "invalid_response_disposition"

    enum CodingKeys: String, CodingKey, CaseIterable { case `default`, rules }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        `default` = try Self.action(c, .default, decoder) ?? .allow
        rules = try c.decodeOmittable([Rule].self, forKey: .rules) ?? []
        guard rules.count <= Self.maxRules else {
            throw Self.invalid(decoder.path(CodingKeys.rules), "has \(rules.count) rules; a task declares at most \(Self.maxRules)")
        }
    }

    /// An action by name; `becomeStream` is decided live only (a declared rule has no client
    /// reading the stream it would make).
    static func action<Key: CodingKey>(_ c: KeyedDecodingContainer<Key>, _ key: Key, _ decoder: any Decoder) throws -> Action? {
        guard let name = try c.decodeOmittable(String.self, forKey: key) else { return nil }
        if let action = Action(rawValue: name) { return action }
        let field = decoder.path(key)
        if name == "becomeStream" {
            throw invalid(field, "becomeStream is not a declared rule: decide the response live (\"decisions\": [\"response\"]) and answer becomeStream, or use allow, cancel or becomeDownload")
        }
        throw invalid(field, "must be \"allow\", \"cancel\" or \"becomeDownload\"")
    }

    static func invalid(_ field: String, _ message: String) -> InputError {
        .refused(field: field, code: errorCode, message: "\(field) \(message)")
    }
}

extension ResponseDisposition.Rule {
    enum CodingKeys: String, CodingKey, CaseIterable { case when, then }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let condition = try c.decodeOmittable(ResponseDisposition.Condition.self, forKey: .when) else {
            throw ResponseDisposition.invalid(decoder.path(CodingKeys.when), "is required: the condition under which `then` applies")
        }
        guard let action = try ResponseDisposition.action(c, .then, decoder) else {
            throw ResponseDisposition.invalid(decoder.path(CodingKeys.then), "is required: allow, cancel or becomeDownload")
        }
        when = condition
        then = action
    }
}

extension ResponseDisposition.Condition {
    enum CodingKeys: String, CodingKey, CaseIterable { case minLength, mimeType, statusCodes }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let invalid = { (key: CodingKeys, message: String) in ResponseDisposition.invalid(decoder.path(key), message) }
        if let value = try c.decodeOmittable(Double.self, forKey: .minLength) {
            // Read as a number first, so 1.5 or -1 get this message rather than a parse error.
            guard value.isFinite, value.rounded() == value, value >= 0, value <= 1e18 else {
                throw invalid(.minLength, "must be a whole number of bytes from 0 to 10^18")
            }
            minLength = Int(value)
        }
        if let type = try c.decodeOmittable(String.self, forKey: .mimeType) {
            guard Self.isMediaRange(type) else {
                throw invalid(.mimeType, "must be a media type or range without parameters: type/subtype, type/* or */*")
            }
            mimeType = type.lowercased()
        }
        if let codes = try c.decodeOmittable([Int].self, forKey: .statusCodes) {
            guard !codes.isEmpty, codes.count <= 100, codes.allSatisfy({ (100...599).contains($0) }) else {
                throw invalid(.statusCodes, "must hold 1 to 100 HTTP status codes from 100 to 599")
            }
            statusCodes = codes
        }
        guard minLength != nil || mimeType != nil || statusCodes != nil else {
            throw ResponseDisposition.invalid(fieldPath(decoder.codingPath), "needs minLength, mimeType or statusCodes (a rule for every response is `default`)")
        }
    }

    /// RFC 9110 media-range tokens: `type/subtype`, `type/*`, `*/*`; no parameters.
    static func isMediaRange(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard text.utf8.count <= 255, parts.count == 2 else { return false }
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let isToken = { (part: Substring) in !part.isEmpty && part.allSatisfy { tchar.contains($0) } }
        let (type, subtype) = (parts[0], parts[1])
        guard isToken(type), isToken(subtype) else { return false }
        if type.contains("*") { return type == "*" && subtype == "*" }
        return subtype == "*" || !subtype.contains("*")
    }
}
