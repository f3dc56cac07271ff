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
