internal import FoundationEssentials
internal import HTTPServer
internal import TransferCore

/// /v1/tasks/{tid} and its actions.
enum TaskRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        let snapshots = EncodedSnapshots()
        router.add("GET", "/v1/tasks/{tid}") { request in
            .json(try service.task(try request.taskId(), owner: request.owner))
        }
        router.add("PATCH", "/v1/tasks/{tid}") { request in
            let id = try request.taskId()
            let body = try request.decode(TaskUpdate.self)
            return .json(try service.update(task: id, body, owner: request.owner))
        }
        router.add("POST", "/v1/tasks/{tid}/resume") { request in
            let id = try request.taskId()
            _ = try request.decode(EmptyRequest.self)
            return .json(try service.resume(task: id, owner: request.owner))
        }
        router.add("POST", "/v1/tasks/{tid}/suspend") { request in
            let id = try request.taskId()
            _ = try request.decode(EmptyRequest.self)
            return .json(try service.suspend(task: id, owner: request.owner))
        }
        router.add("POST", "/v1/tasks/{tid}/cancel") { request in
            let id = try request.taskId()
            _ = try request.decode(CancelRequest.self)
            return .json(try service.cancel(task: id, owner: request.owner))
        }
        router.add("GET", "/v1/tasks/{tid}/progress") { request in
            let id = try request.taskId()
            let (after, wait) = (try request.after(), try request.wait())
            _ = try service.task(id, owner: request.owner)
            return .later { respond in
                try service.progress(task: id, after: after, wait: wait, owner: request.owner) { snapshot in
                    respond(snapshots.response(for: snapshot))
                }
            }
        }
        router.add("GET", "/v1/tasks/{tid}/file") { request in
            let file = try service.downloadedFile(task: try request.taskId(), owner: request.owner)
            var headers = HTTPHeaders([("Content-Type", file.mimeType ?? "application/octet-stream"), ("Accept-Ranges", "bytes")])
            if let filename = file.filename {
                headers.add(name: "Content-Disposition", value: ContentDisposition.attachment(filename: filename))
            }
            switch ByteRange.parse(request.http.headers["Range"], size: file.size) {
            case .whole:
                return .now(HTTPResponse(status: 200, headers: headers, body: .file(path: file.path, offset: 0, length: file.size)))
            case .part(let first, let last):
                headers.add(name: "Content-Range", value: "bytes \(first)-\(last)/\(file.size)")
                return .now(HTTPResponse(status: 206, headers: headers, body: .file(path: file.path, offset: first, length: last - first + 1)))
            case .unsatisfiable:
                var error = APIError(416, "range_not_satisfiable", "the file has \(file.size) bytes")
                error.headers = [("Content-Range", "bytes */\(file.size)")]
                return .now(error.response)
            }
        }
        router.add("GET", "/v1/tasks/{tid}/body") { request in
            let (body, contentType) = try service.body(task: try request.taskId(), owner: request.owner)
            let headers = HTTPHeaders([("Content-Type", contentType ?? "application/octet-stream")])
            return .now(HTTPResponse(status: 200, headers: headers, body: body))
        }
    }
}

/// A body that must be empty or `{}`.
struct EmptyRequest: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case none }
    init(from decoder: any Decoder) throws { try decoder.rejectUnknownKeys(CodingKeys.self) }
}

/// The body of POST /v1/tasks/{tid}/cancel. Resume data is for downloads (issue 3); a data task
/// has none, so the flag is accepted and the answer is the cancelled task.
struct CancelRequest: Decodable {
    var produceResumeData = false
    enum CodingKeys: String, CodingKey, CaseIterable { case produceResumeData }
    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        produceResumeData = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Bool.self, forKey: .produceResumeData) ?? false
    }
}
