public import FoundationEssentials

/// URLSessionConfiguration's three kinds.
public enum SessionKind: String, Codable, Sendable, CaseIterable {
    case `default`, ephemeral, background
}

/// A session's life: active until invalidated, invalidating while its last tasks end.
public enum SessionState: String, Codable, Sendable {
    case active, invalidating, invalidated
}

/// One session as stored and served. Owned by `TransferService`; copies are snapshots.
public struct Session: Codable, Sendable, Equatable {
    public static let sharedID = "shared"

    public var id: String
    public var kind: SessionKind
    public var identifier: String?
    public var description: String?
    public var state: SessionState
    public var configuration: SessionConfiguration
    public var createdAt: Date
    public var invalidatedAt: Date?
    public var version: Int
    /// The fingerprint of the token that created it; nil when created without tokens. Not served.
    public var owner: String?

    enum CodingKeys: String, CodingKey {
        case id, kind, identifier, description, state, configuration, createdAt, invalidatedAt, version
    }

    /// Served JSON keeps absent optionals as explicit nulls (API.md: unknown is null).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(kind, forKey: .kind)
        try c.encode(identifier, forKey: .identifier)
        try c.encode(description, forKey: .description)
        try c.encode(state, forKey: .state)
        try c.encode(configuration, forKey: .configuration)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(invalidatedAt, forKey: .invalidatedAt)
        try c.encode(version, forKey: .version)
    }

    /// Whether a client holding `owner` may see this session.
    public func isVisible(to requester: String?) -> Bool { owner == nil || owner == requester }
}
