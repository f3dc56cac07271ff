public import FoundationEssentials

/// A stored blob as served by /v1/blobs: an upload body uploaded ahead of its task.
/// A value; `BlobStore` holds the authoritative row and the file.
public struct Blob: Codable, Sendable, Equatable {
    /// 32 lowercase hex digits (128 random bits): URL-safe and the file's name.
    public var id: String
    public var size: Int
    /// The SHA-256 of the content, lowercase hex, computed while the body streamed in.
    public var sha256: String
    public var createdAt: Date
    /// The fingerprint of the token that created it; nil when created without tokens. Not served.
    public var owner: String?

    enum CodingKeys: String, CodingKey {
        case id, size, sha256, createdAt
    }

    public init(id: String, size: Int, sha256: String, createdAt: Date, owner: String?) {
        self.id = id
        self.size = size
        self.sha256 = sha256
        self.createdAt = createdAt
        self.owner = owner
    }

    /// Whether a client holding `requester` may see this blob (the rule sessions follow).
    public func isVisible(to requester: String?) -> Bool { owner == nil || owner == requester }

    /// Whether `text` has the shape of a blob id; anything else is never looked up.
    public static func isWellFormedID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
