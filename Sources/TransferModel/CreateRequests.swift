public import FoundationEssentials

/// The body of `POST /v1/sessions`.
public struct SessionCreate: Decodable, Sendable {
    public var kind: SessionKind = .default
    public var identifier: String?
    public var description: String?
    public var configuration = SessionConfiguration()
    /// Where to post the session's events (optional).
    public var webhook: WebhookSpec?

    public init(kind: SessionKind = .default, identifier: String? = nil, description: String? = nil, configuration: SessionConfiguration = SessionConfiguration()) {
        self.kind = kind
        self.identifier = identifier
        self.description = description
        self.configuration = configuration
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case kind, identifier, description, configuration, webhook }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decodeOmittable(SessionKind.self, forKey: .kind) ?? .default
        identifier = try c.decodeOmittable(String.self, forKey: .identifier)
        description = try c.decodeIfPresent(String.self, forKey: .description)
        configuration = try c.decodeOmittable(SessionConfiguration.self, forKey: .configuration) ?? SessionConfiguration()
        webhook = try c.decodeOmittable(WebhookSpec.self, forKey: .webhook)
        if kind == .background {
            guard let identifier else {
                throw DecodingError.keyNotFound(CodingKeys.identifier, .init(codingPath: decoder.codingPath, debugDescription: "a background session needs an identifier"))
            }
            guard (1...200).contains(identifier.count) else {
                throw InputError.invalidValue(field: decoder.path(CodingKeys.identifier), message: "must be 1 to 200 characters")
            }
        } else if identifier != nil {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.identifier), message: "only background sessions have an identifier")
        }
        if let description, description.count > 1000 {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.description), message: "must be at most 1000 characters")
        }
    }
}

/// The body of `POST /v1/sessions/{sid}/tasks`.
public struct TaskCreate: Decodable, Sendable {
    public var kind: TaskKind
    public var request: RequestSpec?
    public var priority: TaskPriority = .default
    public var description: String?
    public var state: TaskState = .running
    /// Downloads only: a path relative to the downloads root.
    public var destination: String?
    /// Downloads only: what to do when the destination exists as the download finishes
    /// (nil: `fail`, or what the resume data carries).
    public var conflict: DownloadConflict?
    /// Downloads only: resume data from a cancelled or failed download, to continue it.
    public var resumeData: String?
    /// Uploads only: send the body with a resumable-upload protocol (tus), so a failure or a
    /// restart continues from the server's offset.
    public var resumable: ResumableProtocol?
    /// URLSessionTask.earliestBeginDate: the task waits (phase `waiting`) until then.
    public var earliestBeginDate: Date?
    /// The task's own rate limit, on top of the daemon-wide ones.
    public var bandwidthLimit: BandwidthLimit?
    /// Data tasks only: what didReceiveResponse decides (allow, cancel, becomeDownload).
    public var responseDisposition: ResponseDisposition?
    /// Stream tasks only: where to connect (`host`, `port`, `tls`). Its request is made from it.
    public var stream: StreamEndpoint?
    /// Download and data tasks: the digest the file or body must have, `"sha-256=<hex>"`.
    public var checksum: Checksum?
    /// Downloads only: how many connections fetch the resource at once (nil: the session's
    /// `maximumSegmentsPerDownload`), and other URLs of the same resource (`DownloadSegments`).
    public var segments: Int?
    public var mirrors: [String]?
    /// The delegate callbacks the client decides live for this task (nil: its session's
    /// configuration's `decisions`, those that apply to the task's kind).
    public var decisions: DecisionSet?
    /// Data tasks only: didReceiveData events carry the bytes (base64 `data`), for clients that
    /// only read the event feed.
    public var dataInEvents = false

    public init(kind: TaskKind = .data, request: RequestSpec, priority: TaskPriority = .default, description: String? = nil, state: TaskState = .running) {
        self.kind = kind
        self.request = request
        self.priority = priority
        self.description = description
        self.state = state
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, request, priority, description, state
        case resumeData, destination, conflict, host, port, tls, resumable, earliestBeginDate, bandwidthLimit
        case responseDisposition, checksum, segments, mirrors, decisions, dataInEvents
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decode(TaskKind.self, forKey: .kind)
        if let names = try c.decodeOmittable([String].self, forKey: .decisions) {
            let kinds = try DecisionKind.decodeList(names, field: decoder.path(CodingKeys.decisions))
            if let refused = kinds.first(where: { !$0.applies(to: kind) }) {
                throw InputError.invalidValue(field: decoder.path(CodingKeys.decisions), message: "\(refused.rawValue) is not decided by a \(kind.rawValue) task (redirect and challenge: data, download and upload tasks; response and cache: data tasks)")
            }
            decisions = DecisionSet(kinds)
        }
        request = try c.decodeOmittable(RequestSpec.self, forKey: .request)
        priority = try c.decodeOmittable(TaskPriority.self, forKey: .priority) ?? .default
        description = try c.decodeIfPresent(String.self, forKey: .description)
        state = try c.decodeOmittable(TaskState.self, forKey: .state) ?? .running
        guard state == .running || state == .suspended else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.state), message: "a new task is running or suspended")
        }
        destination = try c.decodeOmittable(String.self, forKey: .destination)
        conflict = try c.decodeOmittable(String.self, forKey: .conflict).map { try DownloadConflict.parse($0, field: decoder.path(CodingKeys.conflict)) }
        resumeData = try c.decodeOmittable(String.self, forKey: .resumeData)
        bandwidthLimit = try c.decodeOmittable(BandwidthLimit.self, forKey: .bandwidthLimit).flatMap { $0.isUnlimited ? nil : $0 }
        if kind == .stream {
            let endpoint = try Self.decodeStreamEndpoint(c, request: request, decoder: decoder)
            stream = endpoint
            request = RequestSpec(url: endpoint.url, method: "")
        } else {
            for key in [CodingKeys.host, .port, .tls] where c.contains(key) {
                throw InputError.invalidValue(field: decoder.path(key), message: "is for stream tasks only")
            }
        }
        if resumeData != nil, kind != .download {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.resumeData), message: "is for download tasks only")
        }
        if resumeData != nil, request != nil {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.request), message: "must be left out when resumeData is given: the resume data holds the request")
        }
        if kind == .upload, request != nil, request?.body == nil {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.request) + ".body", message: "is required: an upload task sends a body")
        }
        if request?.body == .stream, kind != .upload {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.request) + ".body.stream", message: "is for upload tasks only (URLSession's uploadTask(withStreamedRequest:))")
        }
        if c.contains(.resumable) { resumable = try Self.decodeResumable(c, kind: kind, request: request, decoder: decoder) }
        responseDisposition = try c.decodeOmittable(ResponseDisposition.self, forKey: .responseDisposition)
        if responseDisposition != nil, decisions?.contains(.response) == true {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.decisions), message: "response is decided live or by responseDisposition's rules, not both: give one")
        }
        if responseDisposition != nil, kind != .data {
            throw ResponseDisposition.invalid(decoder.path(CodingKeys.responseDisposition), "is for data tasks only: it decides what a data task does with its response (a download already writes a file)")
        }
        checksum = try c.decodeOmittable(Checksum.self, forKey: .checksum)
        dataInEvents = try c.decodeOmittable(Bool.self, forKey: .dataInEvents) ?? false
        if dataInEvents, kind != .data {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.dataInEvents), message: "is for data tasks only (a download's bytes are in its file)")
        }
        if checksum != nil, kind != .download, kind != .data {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.checksum), message: "is for download and data tasks only")
        }
        segments = try c.decodeSegments(forKey: .segments, field: decoder.path(CodingKeys.segments))
        mirrors = try c.decodeMirrors(forKey: .mirrors, field: decoder.path(CodingKeys.mirrors))
        for key in [CodingKeys.destination, .conflict, .segments, .mirrors] where c.contains(key) && kind != .download {
            throw InputError.invalidValue(field: decoder.path(key), message: "is for download tasks only")
        }
        guard request != nil || resumeData != nil else {
            throw DecodingError.keyNotFound(CodingKeys.request, .init(codingPath: decoder.codingPath, debugDescription: "a \(kind.rawValue) task needs a request"))
        }
        if let description, description.count > 1000 {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.description), message: "must be at most 1000 characters")
        }
        if let text = try c.decodeOmittable(String.self, forKey: .earliestBeginDate) {
            // Parsed here rather than by the decoder's date strategy, whose error names no field.
            guard let date = (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))) else {
                throw InputError.invalidValue(field: decoder.path(CodingKeys.earliestBeginDate), message: "must be an RFC 3339 date-time, e.g. 2026-11-21T08:00:00Z")
            }
            earliestBeginDate = date
        }
        if let date = earliestBeginDate, date.timeIntervalSinceNow > 366 * 86_400 {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.earliestBeginDate), message: "must be within a year from now")
        }
    }
}

extension TaskCreate {
    /// A stream task's `host`, `port` and `tls`; it has no `request` (nor any HTTP field).
    private static func decodeStreamEndpoint(_ c: KeyedDecodingContainer<CodingKeys>, request: RequestSpec?, decoder: any Decoder) throws -> StreamEndpoint {
        for key in [CodingKeys.request, .resumeData, .destination, .conflict, .resumable, .bandwidthLimit, .earliestBeginDate] where c.contains(key) {
            throw InputError.invalidValue(field: decoder.path(key), message: "is not for stream tasks (they take host, port and tls)")
        }
        guard c.contains(.host) else {
            throw DecodingError.keyNotFound(CodingKeys.host, .init(codingPath: decoder.codingPath, debugDescription: "a stream task needs a host"))
        }
        guard c.contains(.port) else {
            throw DecodingError.keyNotFound(CodingKeys.port, .init(codingPath: decoder.codingPath, debugDescription: "a stream task needs a port"))
        }
        let host = try c.decode(String.self, forKey: .host)
        // A name or an address literal: no scheme, path, user or spaces that would change what curl connects to.
        let allowed = host.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-:_".unicodeScalars.contains($0)) }
        guard (1...253).contains(host.count), allowed else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.host), message: "must be a host name or an IP address (letters, digits, '.', '-', ':'; 1 to 253 characters)")
        }
        let port = try c.decode(Int.self, forKey: .port)
        guard (1...65535).contains(port) else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.port), message: "must be from 1 to 65535")
        }
        let tls = try c.decodeOmittable(Bool.self, forKey: .tls) ?? false
        return StreamEndpoint(host: host, port: port, tls: tls)
    }

    /// `"resumable"`: a protocol name, for upload tasks whose request creates the upload with POST.
    private static func decodeResumable(_ c: KeyedDecodingContainer<CodingKeys>, kind: TaskKind, request: RequestSpec?, decoder: any Decoder) throws -> ResumableProtocol {
        let field = decoder.path(CodingKeys.resumable)
        let name = try c.decode(String.self, forKey: .resumable)
        if name == "ietf" {
            throw InputError.notImplemented(field: field, message: "the IETF resumable upload draft is not available in this version; use \"tus\"")
        }
        guard let value = ResumableProtocol(rawValue: name) else {
            throw InputError.invalidValue(field: field, message: "must be \"tus\"")
        }
        guard kind == .upload else {
            throw InputError.invalidValue(field: field, message: "is for upload tasks only")
        }
        // tus sends the body again from the server's offset, which a client stream cannot give.
        if request?.body == .stream {
            throw InputError.invalidValue(field: field, message: "needs a body the daemon can read again (text, base64, json, blob, file or form), not a stream")
        }
        // The request is the tus creation request: POST (RequestSpec's default GET counts as unsaid).
        if let method = request?.method.uppercased(), method != "POST", method != "GET" {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.request) + ".method", message: "must be POST (or left out) for a tus upload: the request creates the upload")
        }
        return value
    }
}

/// The body of `PATCH /v1/tasks/{tid}`.
public struct TaskUpdate: Decodable, Sendable {
    public var priority: TaskPriority?
    public var description: String??
    /// Fields given replace the task's own rate limit's (null: unlimited); null removes it.
    public var bandwidthLimit: BandwidthLimitPatch?

    enum CodingKeys: String, CodingKey, CaseIterable { case priority, description, bandwidthLimit }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        priority = try c.decodeOmittable(TaskPriority.self, forKey: .priority)
        if c.contains(.description) { description = .some(try c.decodeIfPresent(String.self, forKey: .description)) }
        if c.contains(.bandwidthLimit) {
            bandwidthLimit = try c.decodeNil(forKey: .bandwidthLimit)
                ? BandwidthLimitPatch(downloadBytesPerSecond: .some(nil), uploadBytesPerSecond: .some(nil))
                : try c.decode(BandwidthLimitPatch.self, forKey: .bandwidthLimit)
        }
    }
}
