internal import JSONModel

/// The JSON transferctl sends (openapi.yaml: TaskCreate, TaskUpdate, TaskCancel, SessionCreate).
/// Optional fields that are nil are left out of the JSON (the API rejects unknown fields, not
/// missing ones).
struct TaskCreateBody: Encodable {
    var kind: String
    var request: RequestSpecBody?
    var priority: PriorityArgument?
    var description: String?
    var resumeData: String?
    var bandwidthLimit: BandwidthLimitBody?
    /// Downloads: the digest the file must have (`sha-256=HEX`).
    var checksum: String?
    /// Downloads: connections at once (1...16).
    var segments: Int?
    /// Downloads: other URLs of the same resource.
    var mirrors: [String]?
}

/// `POST /v1/sessions/{sid}/tasks:batch`.
struct TaskBatchBody: Encodable {
    var tasks: [TaskCreateBody]
}

/// A task's `request` (RequestSpec): URL, method, headers, body.
struct RequestSpecBody: Encodable {
    var url: String
    var method: String?
    var headers: [String: String]?
    var body: BodySpecBody?
}

/// A request body: inline text (`--data`) or a blob uploaded first (`--file`).
enum BodySpecBody: Encodable {
    case text(String)
    case blob(String)

    private enum Key: String, CodingKey { case text, blob }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .text(let text): try container.encode(text, forKey: .text)
        case .blob(let id): try container.encode(id, forKey: .blob)
        }
    }
}

/// A task's own `bandwidthLimit` (`--limit-rate`).
struct BandwidthLimitBody: Encodable {
    var downloadBytesPerSecond: Int64?
    var uploadBytesPerSecond: Int64?
}

/// `PATCH /v1/tasks/{tid}` changing the priority only.
struct TaskPriorityBody: Encodable {
    var priority: PriorityArgument
}

/// `POST /v1/tasks/{tid}/cancel`, with or without resume data.
struct TaskCancelBody: Encodable {
    var produceResumeData: Bool
}

/// `POST /v1/sessions` for transferctl's own default session.
struct SessionCreateBody: Encodable {
    var description: String
    /// A session of one run's own (`--proxy`, `-k`): the configuration it needs.
    var configuration: [String: JSONValue]?
}
