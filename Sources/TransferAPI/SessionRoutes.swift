internal import HTTPServer
internal import TransferModel
internal import TransferService

/// /v1/sessions and what hangs off a session.
enum SessionRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("POST", "/v1/sessions") { request in
            let body = try request.decode(SessionCreate.self)
            let creation = try service.createSession(body, owner: request.owner)
            var response = HTTPResponse.json(creation.session, status: creation.created ? 201 : 200)
            // The body stays the session itself; the attachment rides in a header.
            if let attachment = creation.attachment { response.headers.add(name: SessionOperationRoutes.attachmentHeader, value: attachment) }
            return .now(response)
        }
        router.add("GET", "/v1/sessions") { request in
            let (limit, cursor, kind) = (try request.limit(), request.http.query["cursor"], try request.sessionKind())
            // In a cluster, the other nodes' ephemeral sessions too (`ClusterSessionList`); a
            // request another node passed on answers for this node's own.
            let holders = (kind == nil || kind == .ephemeral) && request.http.headers[NodeForwarding.header] == nil
                ? try service.otherEphemeralHolders() : []
            guard !holders.isEmpty else {
                let page = try service.listSessions(owner: request.owner, limit: limit, cursor: cursor, kind: kind)
                return .json(Page(items: page.items, next: page.next))
            }
            return ClusterSessionList.answer(request, here: try service.listSessions(owner: request.owner, limit: .max, cursor: nil, kind: kind).items,
                                             holders: holders, limit: limit, cursor: cursor, service: service)
        }
        router.add("GET", "/v1/sessions/{sid}") { request in
            .json(try service.session(request.parameter("sid"), owner: request.owner))
        }
        router.add("POST", "/v1/sessions/{sid}/invalidate") { request in
            let body = try request.decode(InvalidateRequest.self)
            return .json(try service.invalidate(session: request.parameter("sid"), cancelTasks: body.cancelTasks, owner: request.owner))
        }
        router.add("GET", "/v1/sessions/{sid}/events") { request in
            let (after, wait, limit, filter) = (try request.after(), try request.wait(), try request.limit(), try request.eventFilter())
            let session = request.parameter("sid")
            // Look the session up now so an unknown id is a 404, not a held request.
            _ = try service.session(session, owner: request.owner)
            // A background session's client keeps its attachment live by polling with it.
            if let attachment = request.http.query["attachment"] {
                try service.keepAttached(session: session, attachment: attachment, owner: request.owner)
            }
            return .held { respond in
                try service.events(session: session, after: after, limit: limit, wait: wait, owner: request.owner, filter: filter) { page in
                    respond(.json(page))
                }
            }
        }
        router.add("POST", "/v1/sessions/{sid}/tasks") { request in
            let body = try request.decodeTaskCreate()
            return .json(try service.createTask(in: request.parameter("sid"), body, owner: request.owner), status: 201)
        }
        // All or nothing, in order; `tasks:batch` is one literal segment (the AIP-136 style).
        router.add("POST", "/v1/sessions/{sid}/tasks:batch") { request in
            let body = try request.decodeTaskBatch()
            let tasks = try service.createTasks(in: request.parameter("sid"), body.tasks, owner: request.owner)
            let answer = TaskListAnswer.json(tasks, under: "tasks")
            return .now(HTTPResponse(status: 201, headers: HTTPHeaders([("Content-Type", "application/json")]), body: answer))
        }
        router.add("GET", "/v1/sessions/{sid}/tasks") { request in
            var state: TaskState?
            if let text = request.http.query["state"] {
                guard let value = TaskState(rawValue: text) else {
                    throw APIError(400, "invalid_query", "state must be one of suspended, running, canceling, completed", field: "state")
                }
                state = value
            }
            let page = try service.listTasks(in: request.parameter("sid"), state: state, owner: request.owner,
                                             limit: try request.limit(), cursor: request.http.query["cursor"])
            return .json(Page(items: page.items, next: page.next))
        }
    }
}

/// The body of POST /v1/sessions/{sid}/invalidate.
struct InvalidateRequest: Decodable {
    var cancelTasks = false
    enum CodingKeys: String, CodingKey, CaseIterable { case cancelTasks }
    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        cancelTasks = try decoder.container(keyedBy: CodingKeys.self).decodeOmittable(Bool.self, forKey: .cancelTasks) ?? false
    }
}
