public import FoundationEssentials
public import JSONModel

/// The body of a task's request, as the client gives it. Exactly one form per body.
public enum RequestBody: Sendable, Equatable {
    case text(String)
    case base64(Data)
    case json(JSONValue)
    /// A blob uploaded ahead (`POST /v1/blobs`), by id: streamed from its file.
    case blob(String)
    /// A file under the uploads root, by relative path: streamed from it.
    case file(String)
    /// multipart/form-data built by the service, file parts streamed from disk.
    case form([FormPart])
    /// Sent by the client in chunks after the task is created (`body-chunks`, `body-end`), as
    /// URLSession's uploadTask(withStreamedRequest:); the length is unknown, so it goes chunked.
    case stream

    /// The bytes to send, for the forms held in the request itself (nil for blob and file).
    public var inlineData: Data? {
        switch self {
        case .text(let text): return Data(text.utf8)
        case .base64(let data): return data
        case .json(let value): return (try? JSONCoding.encoder.encode(value)) ?? Data("null".utf8)
        case .blob, .file, .form, .stream: return nil
        }
    }

    /// The name of the file a `file` body sends (its last path component), for metadata.
    package var filename: String? {
        guard case .file(let relative) = self, let last = relative.split(separator: "/").last else { return nil }
        return String(last)
    }

    /// The Content-Type this form implies when the request sets none (nil: libcurl's form default,
    /// which is also what URLSession sends for a bare httpBody).
    public var impliedContentType: String? {
        if case .json = self { return "application/json" }
        return nil
    }
}

extension RequestBody: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case text, base64, json
        case blob, file, form
        case stream
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let present = c.allKeys
        guard present.count == 1, let key = present.first else {
            throw InputError.invalidValue(field: fieldPath(decoder.codingPath), message: "give exactly one of text, base64, json, blob, file, form")
        }
        switch key {
        case .text: self = .text(try c.decode(String.self, forKey: .text))
        case .base64:
            guard let data = Base64Input.decode(try c.decode(String.self, forKey: .base64)) else {
                throw InputError.invalidValue(field: decoder.path(key), message: "is not valid base64")
            }
            self = .base64(data)
        case .json: self = .json(try c.decode(JSONValue.self, forKey: .json))
        case .blob: self = .blob(try c.decode(String.self, forKey: .blob))
        case .file: self = .file(try c.decode(String.self, forKey: .file))
        case .form:
            let parts = try c.decode([FormPart].self, forKey: .form)
            guard !parts.isEmpty, parts.count <= 1000 else {
                throw InputError.invalidValue(field: decoder.path(key), message: "must have 1 to 1000 parts")
            }
            self = .form(parts)
        case .stream:
            guard try c.decode(Bool.self, forKey: .stream) else {
                throw InputError.invalidValue(field: decoder.path(key), message: "must be true: the client then sends the body with POST /v1/tasks/{tid}/body-chunks and body-end")
            }
            self = .stream
        }
    }
}
