public import FoundationEssentials

/// How a session's webhook is called: once per event, or with a digest of the events since the
/// last delivery.
public enum WebhookMode: String, Codable, Sendable, CaseIterable {
    case each, digest
}

/// The `webhook` of `POST /v1/sessions`: where the session's events are posted and the secret
/// they are signed with. The secret is write-only: never served, never logged.
public struct WebhookSpec: Decodable, Sendable, Equatable {
    public var url: String
    public var secret: String
    public var mode: WebhookMode = .each

    public init(url: String, secret: String, mode: WebhookMode = .each) {
        self.url = url
        self.secret = secret
        self.mode = mode
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case url, secret, mode }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.decode(String.self, forKey: .url)
        secret = try c.decode(String.self, forKey: .secret)
        mode = try c.decodeOmittable(WebhookMode.self, forKey: .mode) ?? .each
        try RequestURL.check(url, field: decoder.path(CodingKeys.url))
        guard let scheme = URL(string: url)?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.url), message: "must be an http or https URL")
        }
        // Counted as JSON Schema counts a string's length (openapi.yaml's minLength and
        // maxLength): in characters (Unicode code points), not UTF-8 bytes.
        guard (16...1024).contains(secret.unicodeScalars.count) else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.secret), message: "must be 16 to 1024 characters")
        }
    }
}

/// What a session shows of its webhook: where and how it posts, and how far delivery got.
public struct WebhookStatus: Codable, Sendable, Equatable {
    public var url: String
    public var mode: WebhookMode
    /// The seq of the last event delivered, or given up on after every attempt failed.
    public var deliveredThrough = 0
    /// Deliveries given up after `maxAttempts` failures (their events were skipped).
    public var failedDeliveries = 0
    /// The last failure, delivered or not since ("HTTP 500", "connection refused", ...).
    @NullEncoded public var lastError: String? = nil
    @NullEncoded public var lastDeliveredAt: Date? = nil

    public init(url: String, mode: WebhookMode) {
        self.url = url
        self.mode = mode
    }
}
