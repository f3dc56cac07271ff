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

    /// The name of the libcurl connection pool the session's transfers use, one per session as
    /// URLSession keeps: no TLS, proxy or authentication state crosses sessions. The `shared`
    /// session is one per tenant (token owner), so it has a pool per tenant (issue 16, item 7).
    package static func connectionPool(session id: String, owner: String?) -> String {
        id == sharedID ? id + "/" + (owner ?? "") : id
    }

    public var id: String
    public var kind: SessionKind
    @NullEncoded public var identifier: String?
    @NullEncoded public var description: String?
    public var state: SessionState
    public var configuration: SessionConfiguration
    public var createdAt: Date
    @NullEncoded public var invalidatedAt: Date?
    public var version: Int
    /// The event feed is acknowledged up to this seq (`POST .../events/ack`): events at or
    /// below it are gone, and a reattach replays from here. 0: nothing acknowledged.
    public var acknowledgedEventSeq = 0
    /// Where the session's events are posted, and how far that got (nil: no webhook).
    @NullEncoded public var webhook: WebhookStatus? = nil
    /// The fingerprint of the token that created it; nil when created without tokens. Not served.
    public var owner: String?

    enum CodingKeys: String, CodingKey {
        case id, kind, identifier, description, state, configuration, createdAt, invalidatedAt, version
        case acknowledgedEventSeq, webhook
    }

    /// Whether a client holding `owner` may see this session.
    public func isVisible(to requester: String?) -> Bool { owner == nil || owner == requester }

    /// The memberwise initializer, for the layers above.
    package init(
        id: String,
        kind: SessionKind,
        identifier: String? = nil,
        description: String? = nil,
        state: SessionState,
        configuration: SessionConfiguration,
        createdAt: Date,
        invalidatedAt: Date? = nil,
        version: Int,
        acknowledgedEventSeq: Int = 0,
        webhook: WebhookStatus? = nil,
        owner: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.identifier = identifier
        self.description = description
        self.state = state
        self.configuration = configuration
        self.createdAt = createdAt
        self.invalidatedAt = invalidatedAt
        self.version = version
        self.acknowledgedEventSeq = acknowledgedEventSeq
        self.webhook = webhook
        self.owner = owner
    }
}
