public import FoundationEssentials

/// One part of a `form` body (multipart/form-data, RFC 7578): a plain field `{"name", "value"}`,
/// or a file part `{"name", "filename"?, "contentType"?, "blob" | "file" | "base64"}`.
public struct FormPart: Decodable, Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        case value(String)
        case base64(Data)
        case blob(String)
        case file(String)
    }

    public var name: String
    public var filename: String?
    public var contentType: String?
    public var content: Content

    enum CodingKeys: String, CodingKey, CaseIterable { case name, filename, contentType, value, base64, blob, file }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        filename = try c.decodeOmittable(String.self, forKey: .filename)
        contentType = try c.decodeOmittable(String.self, forKey: .contentType)
        let sources = [CodingKeys.value, .base64, .blob, .file].filter { c.contains($0) }
        guard sources.count == 1, let source = sources.first else {
            throw InputError.invalidValue(field: fieldPath(decoder.codingPath), message: "give exactly one of value, base64, blob, file")
        }
        switch source {
        case .value: content = .value(try c.decode(String.self, forKey: .value))
        case .base64:
            guard let data = Base64Input.decode(try c.decode(String.self, forKey: .base64)) else {
                throw InputError.invalidValue(field: decoder.path(CodingKeys.base64), message: "is not valid base64")
            }
            content = .base64(data)
        case .blob: content = .blob(try c.decode(String.self, forKey: .blob))
        default: content = .file(try c.decode(String.self, forKey: .file))
        }
        if case .value = content, filename != nil || contentType != nil {
            throw InputError.invalidValue(field: fieldPath(decoder.codingPath), message: "a plain field (value) has no filename or contentType")
        }
        // Quotes and line breaks cannot be written unambiguously in Content-Disposition.
        for (key, text) in [(CodingKeys.name, name), (.filename, filename ?? ""), (.contentType, contentType ?? "")]
        where text.contains(where: { $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) {
            throw InputError.invalidValue(field: decoder.path(key), message: "must not contain quotes or line breaks")
        }
        guard !name.isEmpty else { throw InputError.invalidValue(field: decoder.path(CodingKeys.name), message: "must not be empty") }
    }

    /// The media type a file name suggests, for parts that give none.
    package static func mediaType(forFilename name: String) -> String {
        let types = [
            "txt": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
            "json": "application/json", "xml": "application/xml", "pdf": "application/pdf", "zip": "application/zip",
            "gz": "application/gzip", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
            "webp": "image/webp", "svg": "image/svg+xml", "mp4": "video/mp4", "mp3": "audio/mpeg", "wav": "audio/wav",
        ]
        let suffix = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return name.contains(".") ? types[suffix] ?? "application/octet-stream" : "application/octet-stream"
    }
}
