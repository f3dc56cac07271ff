public import FoundationEssentials

/// Where an interrupted download stands: enough to continue it with a ranged request.
public struct ResumeState: Codable, Sendable, Equatable {
    /// Bytes already in the partial file.
    public var offset: Int
    /// The validators of the representation the bytes came from (If-Range needs one).
    public var etag: String?
    public var lastModified: String?
    public var expectedLength: Int?

    /// A strong ETag, else Last-Modified: what If-Range may carry (RFC 9110 13.1.5).
    public var ifRange: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// The memberwise initializer, for the layers above.
    package init(offset: Int, etag: String? = nil, lastModified: String? = nil, expectedLength: Int? = nil) {
        self.offset = offset
        self.etag = etag
        self.lastModified = lastModified
        self.expectedLength = expectedLength
    }
}

/// The contents of resume data (cancel(byProducingResumeData:)): opaque to clients, signed by
/// `ResumeDataSealer` (encrypted, bound to its tenant) so that an edited blob is refused.
struct ResumeData: Codable, Sendable, Equatable {
    var version = 1
    /// The URL the bytes came from (after redirects) and the request that fetched them.
    var url: String
    var request: RequestInfo
    var state: ResumeState
    /// The partial file, relative to the data folder ("partial/NAME.part").
    var partialFile: String
    var destination: String?
    /// The download's `conflict` policy for its destination.
    var conflict: DownloadConflict? = nil
    /// The user and password its URL carried (the resume data is sealed, so they stay unread).
    var login: URLLogin? = nil
    /// The download's `checksum`, so that the task continuing it checks the whole file the same way.
    var checksum: Checksum? = nil
    var createdAt: Date
}
