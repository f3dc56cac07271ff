internal import FoundationEssentials
internal import TransferModel
internal import TransferStore

extension TransferService {
    /// The segments a blob, file or form body streams from; nil for bodies held inline.
    func streamedBody(_ body: RequestBody, owner: String?) throws -> StreamedBody? {
        switch body {
        case .blob(let id):
            return StreamedBody(segments: [try blobSegment(id, owner: owner, field: "request.body.blob")])
        case .file(let relative):
            return StreamedBody(segments: [try fileSegment(relative, field: "request.body.file")])
        case .form(let parts):
            return try multipart(parts, owner: owner)
        case .text, .base64, .json, .stream:  // inline, or sent by the client later
            return nil
        }
    }

    private func blobSegment(_ id: String, owner: String?, field: String) throws -> BodySegment {
        guard let blob = try? blobs.blob(id, owner: owner) else {
            throw InputError.invalidValue(field: field, message: "names no blob of yours: upload it first with POST /v1/blobs")
        }
        return .file(path: blobs.path(of: blob), size: blob.size)
    }

    private func fileSegment(_ relative: String, field: String) throws -> BodySegment {
        guard let root = configuration.uploadsDirectory else {
            throw InputError.notImplemented(field: field, message: "file bodies need an uploads root: start the daemon with --uploads-dir")
        }
        let path = try RootedPath.resolve(relative, root: root, field: field, code: "invalid_file")
        // The file itself (it may be a symlink) must resolve inside the root too, and exist.
        guard FileSystem.isInside(path, root: root), let size = FileSystem.size(of: path) else {
            throw InputError.refused(field: field, code: "invalid_file", message: "\(field) is not a regular file inside the uploads root")
        }
        return .file(path: path, size: size)
    }

    /// multipart/form-data (RFC 7578): per part a boundary line, Content-Disposition (with the
    /// filename for file parts) and, for file parts, Content-Type; then the closing boundary.
    private func multipart(_ parts: [FormPart], owner: String?) throws -> StreamedBody {
        let boundary = "transferd-" + String(UUID().uuidString.filter { $0 != "-" }).lowercased()
        var segments: [BodySegment] = []
        func append(_ text: String) { append(Data(text.utf8)) }
        func append(_ data: Data) {
            if case .bytes(let previous)? = segments.last {
                segments[segments.count - 1] = .bytes(previous + data)
            } else {
                segments.append(.bytes(data))
            }
        }
        for (index, part) in parts.enumerated() {
            let field = "request.body.form[\(index)]"
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
            var content: BodySegment
            switch part.content {
            case .value(let value):
                head += "\r\n\r\n"
                append(head)
                append(value)
                append("\r\n")
                continue
            case .base64(let data): content = .bytes(data)
            case .blob(let id): content = try blobSegment(id, owner: owner, field: field + ".blob")
            case .file(let relative): content = try fileSegment(relative, field: field + ".file")
            }
            let filename = part.filename ?? {
                if case .file(let relative) = part.content { return String(relative.split(separator: "/").last ?? "file") }
                return part.name
            }()
            head += "; filename=\"\(filename)\"\r\nContent-Type: \(part.contentType ?? FormPart.mediaType(forFilename: filename))\r\n\r\n"
            append(head)
            if case .bytes(let data) = content { append(data) } else { segments.append(content) }
            append("\r\n")
        }
        append("--\(boundary)--\r\n")
        return StreamedBody(segments: segments, contentType: "multipart/form-data; boundary=\(boundary)")
    }
}
