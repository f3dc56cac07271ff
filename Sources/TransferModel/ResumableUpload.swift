/// The resumable-upload protocol an upload task asked for with `"resumable"`.
public enum ResumableProtocol: String, Codable, Sendable, CaseIterable {
    /// tus 1.0.0, core protocol and creation extension (https://tus.io/protocols/resumable-upload).
    case tus
}

/// Where a resumable upload stands on its server: the upload resource the server created and
/// the bytes it confirmed holding. Part of the task (stored and served as `resumable`), so a
/// restart or a retry continues from the server's offset instead of from zero.
public struct ResumableUpload: Codable, Sendable, Equatable {
    public var `protocol`: ResumableProtocol
    /// The upload resource, absolute; null until the server answered the creation request.
    @NullEncoded public var uploadURL: String?
    /// Bytes the server confirmed (the Upload-Offset of its last PATCH or HEAD answer).
    public var offset: Int
    /// Sent as the `filename` of Upload-Metadata (known for `file` bodies).
    @NullEncoded public var filename: String?

    public init(protocol: ResumableProtocol, uploadURL: String? = nil, offset: Int = 0, filename: String? = nil) {
        self.protocol = `protocol`
        self.uploadURL = uploadURL
        self.offset = offset
        self.filename = filename
    }
}
