internal import FoundationEssentials
internal import HTTPServer
internal import TransferModel
internal import TransferService

/// /v1/tasks/{tid} and its actions.
enum TaskRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        let snapshots = EncodedSnapshots()
        router.add("GET", "/v1/tasks/{tid}") { request in
            let task = try service.servedTask(try request.taskId(), owner: request.owner)
            return .json(task, node: try service.node(running: task))
        }
        router.add("PATCH", "/v1/tasks/{tid}") { request in
            let id = try request.taskId()
            let body = try request.decode(TaskUpdate.self)
            return try command(service, .update(body), task: id, owner: request.owner)
        }
        router.add("DELETE", "/v1/tasks/{tid}") { request in
            let id = try request.taskId()
            try service.deleteTask(id, owner: request.owner, deletingFile: try request.flag("deleteFile"))
            return .now(HTTPResponse(status: 204))
        }
        router.add("POST", "/v1/tasks/{tid}/resume") { request in
            let id = try request.taskId()
            _ = try request.decode(EmptyRequest.self)
            return try command(service, .resume, task: id, owner: request.owner)
        }
        router.add("POST", "/v1/tasks/{tid}/suspend") { request in
            let id = try request.taskId()
            _ = try request.decode(EmptyRequest.self)
            return try command(service, .suspend, task: id, owner: request.owner)
        }
        router.add("POST", "/v1/tasks/{tid}/cancel") { request in
            let id = try request.taskId()
            let body = try request.decode(CancelRequest.self)
            // The engine hands resume data back once it has stopped the transfer: answer then
            // (a held request, no thread), with the completed task and its error.resumeData.
            return try command(service, .cancel(produceResumeData: body.produceResumeData), task: id, owner: request.owner) { task in
                guard body.produceResumeData, task.state != .completed else { return .json(task) }
                return .later { respond in
                    try whenCompleted(service, task: id, after: task.version, owner: request.owner, deadline: .now + .seconds(10)) { task in
                        respond(task.map { .json($0) } ?? APIError.notFound("no task \(id)").response)
                    }
                }
            }
        }
        // A {"stream": true} body, sent by the client: raw chunks in order, then the end.
        router.add("POST", "/v1/tasks/{tid}/body-chunks") { request in
            let id = try request.taskId()
            guard !request.http.body.isEmpty else {
                throw APIError(400, "empty_chunk", "a chunk needs at least one byte; end the body with POST /v1/tasks/\(id)/body-end")
            }
            return .json(try service.appendBodyChunk(task: id, request.http.body, owner: request.owner))
        }
        router.add("POST", "/v1/tasks/{tid}/body-end") { request in
            let id = try request.taskId()
            _ = try request.decode(EmptyRequest.self)
            return .json(try service.endBody(task: id, owner: request.owner))
        }
        router.add("GET", "/v1/tasks/{tid}/progress") { request in
            let id = try request.taskId()
            let (after, wait) = (try request.after(), try request.wait())
            _ = try service.task(id, owner: request.owner)
            return .held { respond in
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
        // A link a browser can follow without the token: the dashboard's "Open file".
        router.add("POST", "/v1/tasks/{tid}/file-grant") { request in
            let id = try request.taskId()
            _ = try request.decode(EmptyRequest.self)
            let grant = try service.fileGrant(task: id, owner: request.owner)
            return .json(FileGrantAnswer(url: grant.url, expiresAt: Date(timeIntervalSince1970: Double(grant.expiry))), status: 201)
        }
        // The answer to a decision the task waits for (issue 21): the task after it.
        router.add("POST", "/v1/tasks/{tid}/decisions/{did}") { request in
            let id = try request.taskId()
            let decisionId = request.parameter("did")
            guard (1...64).contains(decisionId.utf8.count), decisionId.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                throw APIError(404, "not_found", "no decision \(decisionId.prefix(64)) for task \(id)")
            }
            let answer = try request.decode(DecisionAnswer.self)
            return try command(service, .decide(decisionId: decisionId, answer), task: id, owner: request.owner)
        }
        router.add("GET", "/v1/tasks/{tid}/body") { request in
            try TaskBodyRoute.answer(service, task: try request.taskId(), request)
        }
        router.add("GET", "/v1/tasks/{tid}/metrics") { request in
            .json(try service.metrics(task: try request.taskId(), owner: request.owner))
        }
    }
}

/// Calls `answer` exactly once with the task once it has completed (or at the deadline, as it
/// is then; nil if it vanished), waiting through the progress long-poll.
/// Runs a command on a task and answers with the task after it (or what `then` makes of it).
/// One the service passed to the node that runs the task (`CommandForwarded`) is answered when
/// that node answers, the request held meanwhile: no HTTP worker waits for another node.
private func command(
    _ service: TransferService, _ command: ClusterCommand, task id: Int, owner: String?,
    then: @escaping @Sendable (TransferTask) -> RouteResult = { .json($0) }
) throws -> RouteResult {
    do {
        return then(try service.command(command, task: id, owner: owner))
    } catch let forwarded as CommandForwarded {
        return .later { respond in
            forwarded.answer { result in
                do {
                    switch then(try result.get()) {
                    case .now(let response): respond(response)
                    case .later(let start), .held(let start): try start(respond)
                    }
                } catch {
                    respond(APIError.from(error).response)
                }
            }
        }
    }
}

private func whenCompleted(_ service: TransferService, task id: Int, after version: Int, owner: String?,
                           deadline: ContinuousClock.Instant, answer: @escaping @Sendable (TransferTask?) -> Void) throws {
    let left = deadline - .now
    let seconds = max(0, Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
    try service.progress(task: id, after: version, wait: seconds, owner: owner) { snapshot in
        if snapshot.state == .completed || ContinuousClock.now >= deadline || snapshot.version <= version {
            answer(try? service.task(id, owner: owner))
            return
        }
        do {
            try whenCompleted(service, task: id, after: snapshot.version, owner: owner, deadline: deadline, answer: answer)
        } catch {
            answer(try? service.task(id, owner: owner))
        }
    }
}

/// A body that must be empty or `{}`.
struct EmptyRequest: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case none }
    init(from decoder: any Decoder) throws { try decoder.rejectUnknownKeys(CodingKeys.self) }
}

/// The body of POST /v1/tasks/{tid}/cancel. `produceResumeData` matters for downloads only: the
/// answer then waits for the transfer to stop and its error carries the resume data.
struct CancelRequest: Decodable {
    var produceResumeData = false
    enum CodingKeys: String, CodingKey, CaseIterable { case produceResumeData }
    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        produceResumeData = try decoder.container(keyedBy: CodingKeys.self).decodeOmittable(Bool.self, forKey: .produceResumeData) ?? false
    }
}

/// The answer of POST /v1/tasks/{tid}/file-grant.
struct FileGrantAnswer: Encodable {
    let url: String
    let expiresAt: Date
}
