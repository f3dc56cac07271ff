public import FoundationEssentials

/// One piece of a request body that the engine streams: bytes kept with the task, or a file
/// read at send time (a blob, a file under the uploads root, a form's file part).
public enum BodySegment: Codable, Sendable, Equatable {
    case bytes(Data)
    case file(path: String, size: Int)

    package var size: Int {
        switch self {
        case .bytes(let data): return data.count
        case .file(_, let size): return size
        }
    }
}

/// A body streamed from segments, with what it implies for the request.
package struct StreamedBody: Sendable {
    package var segments: [BodySegment]
    /// Set for forms: `multipart/form-data; boundary=...`, which must go with these bytes.
    package var contentType: String?
    package var size: Int { segments.reduce(0) { $0 + $1.size } }

    /// The memberwise initializer, for the layers above.
    package init(segments: [BodySegment], contentType: String? = nil) {
        self.segments = segments
        self.contentType = contentType
    }
}
