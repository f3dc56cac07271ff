package import FoundationEssentials

/// Where an interrupted download stands: enough to continue it with a ranged request.
public struct ResumeState: Codable, Sendable, Equatable {
    /// Bytes already in the partial file.
    public var offset: Int
    /// The validators of the representation the bytes came from (If-Range needs one).
    public var etag: String?
    public var lastModified: String?
    public var expectedLength: Int?
    /// A segmented download's parts (issue 18 item 2), each with its own synced offset; `offset`
    /// is then the bytes from 0 without a gap, which a plain resume may continue from. Nil for
    /// a download over one connection.
    public var parts: [ResumePart]?

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
package struct ResumeData: Codable, Sendable, Equatable {
    package var version = 1
    /// The URL the bytes came from (after redirects) and the request that fetched them.
    package var url: String
    package var request: RequestInfo
    package var state: ResumeState
    /// The partial file, relative to the data folder ("partial/NAME.part").
    package var partialFile: String
    package var destination: String?
    /// The download's `conflict` policy for its destination.
    package var conflict: DownloadConflict? = nil
    /// The user and password its URL carried (the resume data is sealed, so they stay unread).
    package var login: URLLogin? = nil
    /// The download's `checksum`, so that the task continuing it checks the whole file the same way.
    package var checksum: Checksum? = nil
    var createdAt: Date

    /// The memberwise initializer, for the layers above.
    package init(
        url: String,
        request: RequestInfo,
        state: ResumeState,
        partialFile: String,
        destination: String? = nil,
        conflict: DownloadConflict? = nil,
        login: URLLogin? = nil,
        checksum: Checksum? = nil,
        createdAt: Date
    ) {
        self.url = url
        self.request = request
        self.state = state
        self.partialFile = partialFile
        self.destination = destination
        self.conflict = conflict
        self.login = login
        self.checksum = checksum
        self.createdAt = createdAt
    }
}
