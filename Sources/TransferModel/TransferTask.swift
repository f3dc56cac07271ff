public import FoundationEssentials

/// One task as stored and served (URLSessionTask's properties). `TransferService` owns the live
/// copy; everything else gets snapshots. `version` increases on every change (long-poll cursor).
public struct TransferTask: Codable, Sendable, Equatable {
    public var id: Int
    public var sessionId: String
    public var kind: TaskKind
    /// Its state and phase; only the machine's transitions change them (`TaskMachine`).
    package var lifecycle: TaskMachine
    public var state: TaskState { lifecycle.state }
    public var phase: TaskPhase { lifecycle.phase }
    // The one-byte fields sit together here, in what would be padding before `priority`.
    /// A download with a destination: what it does when the destination exists (default `fail`).
    public var conflict: DownloadConflict?
    /// Where the response came from: the network, the URL cache, or the cache after a 304.
    public var cacheStatus: CacheStatus?
    /// The delegate callbacks a client decides live (`DecisionKind`; empty: none).
    public var decisions = DecisionSet()
    /// A data task whose didReceiveData events carry the bytes (`data`, base64, at most
    /// `TaskEvent.maxDataPerEvent` each).
    public var dataInEvents = false
    public var priority: TaskPriority
    @Indirect public var description: String?
    public var originalRequest: RequestInfo
    @Indirect public var currentRequest: RequestInfo?
    @Indirect public var response: ResponseInfo?
    public var progress: TaskProgress
    @Indirect public var error: TaskError?
    /// A completed download's file: its absolute path on the daemon's host.
    public var location: String?
    /// A download's destination as the client gave it, relative to the downloads root.
    public var destination: String?
    public var createdAt: Date
    public var startedAt: Date?
    public var completedAt: Date?
    public var version: Int
    /// The fingerprint of the token that created it; not served.
    public var owner: String?
    /// Where a download continues from (its partial file's offset and validators); stored, not served.
    @Indirect public var resume: ResumeState?
    /// The user and password its URL carried (`URLLogin`), sealed; stored, not served.
    @Indirect package var sealedLogin: String?
    /// What a blob, file or form body streams from; stored, not served.
    public var streamedBody: [BodySegment]?
    /// A body the client streams in chunks: what has arrived so far.
    @Indirect public var bodyStream: BodyStreamState?
    /// A resumable (tus) upload's server-side state: its upload URL and confirmed offset.
    @Indirect public var resumable: ResumableUpload?
    /// URLSessionTask.earliestBeginDate: not started before then.
    @Indirect public var earliestBeginDate: Date?
    /// How often the scheduler stopped this (background) transfer to give its slot to a higher class.
    public var preemptions = 0
    /// How many times the task was tried again after a transient failure (background sessions,
    /// `RetryPolicy`); tries while waiting for connectivity do not count.
    public var retryCount = 0
    /// The task's own rate limit (nil: only the daemon-wide limits apply).
    @Indirect public var bandwidthLimit: BandwidthLimit?
    /// A data task's declared answer to its response; a task it turned into a download keeps it
    /// (its `kind` is then `download`).
    @Indirect public var responseDisposition: ResponseDisposition?
    /// The digest the task's body or file must have (`"checksum": "sha-256=<hex>"`).
    @Indirect public var checksum: Checksum?
    /// What a completed task's body or file hashed to (SHA-256, and its checksum's algorithm).
    public var digest: TaskDigest?
    /// A download's connections at once, as asked (nil: the session's `maximumSegmentsPerDownload`).
    @Indirect public var segments: Int?
    /// Other URLs of a download's resource, used for segments and as failover (`DownloadSegments`).
    public var mirrors: [String]?
    /// The decision the task waits for now, if any.
    @Indirect public var decision: PendingDecision?

    /// The effective service type (the request's, else the session's).
    public var networkServiceType: NetworkServiceType { originalRequest.networkServiceType }
    /// The scheduler's class for it, from the service type.
    public var schedulingClass: SchedulingClass { networkServiceType.schedulingClass }

    enum CodingKeys: String, CodingKey {
        case id, sessionId, kind, state, phase, priority, networkServiceType, schedulingClass, preemptions, earliestBeginDate, description
        case originalRequest, currentRequest, response, progress, error, location, destination, conflict, resumable, bandwidthLimit
        case createdAt, startedAt, completedAt, version, owner, resume, sealedLogin, streamedBody, bodyStream, retryCount
        case cacheStatus, responseDisposition, checksum, digest, segments, mirrors, decisions, decision, dataInEvents
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        sessionId = try c.decode(String.self, forKey: .sessionId)
        kind = try c.decode(TaskKind.self, forKey: .kind)
        lifecycle = TaskMachine(restoring: try c.decode(TaskState.self, forKey: .state), phase: try c.decode(TaskPhase.self, forKey: .phase))
        priority = try c.decode(TaskPriority.self, forKey: .priority)
        description = try c.decodeIfPresent(String.self, forKey: .description)
        originalRequest = try c.decode(RequestInfo.self, forKey: .originalRequest)
        currentRequest = try c.decodeIfPresent(RequestInfo.self, forKey: .currentRequest)
        response = try c.decodeIfPresent(ResponseInfo.self, forKey: .response)
        progress = try c.decode(TaskProgress.self, forKey: .progress)
        error = try c.decodeIfPresent(TaskError.self, forKey: .error)
        location = try c.decodeIfPresent(String.self, forKey: .location)
        destination = try c.decodeIfPresent(String.self, forKey: .destination)
        conflict = try c.decodeIfPresent(DownloadConflict.self, forKey: .conflict)
        resumable = try c.decodeIfPresent(ResumableUpload.self, forKey: .resumable)
        bandwidthLimit = try c.decodeIfPresent(BandwidthLimit.self, forKey: .bandwidthLimit)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        startedAt = try c.decodeIfPresent(Date.self, forKey: .startedAt)
        completedAt = try c.decodeIfPresent(Date.self, forKey: .completedAt)
        version = try c.decode(Int.self, forKey: .version)
        owner = try c.decodeIfPresent(String.self, forKey: .owner)
        resume = try c.decodeIfPresent(ResumeState.self, forKey: .resume)
        sealedLogin = try c.decodeIfPresent(String.self, forKey: .sealedLogin)
        streamedBody = try c.decodeIfPresent([BodySegment].self, forKey: .streamedBody)
        bodyStream = try c.decodeIfPresent(BodyStreamState.self, forKey: .bodyStream)
        preemptions = try c.decodeIfPresent(Int.self, forKey: .preemptions) ?? 0
        earliestBeginDate = try c.decodeIfPresent(Date.self, forKey: .earliestBeginDate)
        retryCount = try c.decodeIfPresent(Int.self, forKey: .retryCount) ?? 0  // rows stored before retries
        cacheStatus = try c.decodeIfPresent(CacheStatus.self, forKey: .cacheStatus)
        responseDisposition = try c.decodeIfPresent(ResponseDisposition.self, forKey: .responseDisposition)
        checksum = try c.decodeIfPresent(Checksum.self, forKey: .checksum)  // absent in rows stored before checksums
        digest = try c.decodeIfPresent(TaskDigest.self, forKey: .digest)
        segments = try c.decodeIfPresent(Int.self, forKey: .segments)  // absent in rows stored before segments
        mirrors = try c.decodeIfPresent([String].self, forKey: .mirrors)
        decisions = try c.decodeIfPresent(DecisionSet.self, forKey: .decisions) ?? []  // absent in rows stored before decisions
        decision = try c.decodeIfPresent(PendingDecision.self, forKey: .decision)
        dataInEvents = try c.decodeIfPresent(Bool.self, forKey: .dataInEvents) ?? false
    }

    package init(id: Int, sessionId: String, kind: TaskKind, state: TaskState, priority: TaskPriority, description: String?, request: RequestInfo, owner: String?, now: Date) {
        self.id = id
        self.sessionId = sessionId
        self.kind = kind
        self.lifecycle = TaskMachine(created: state)
        self.priority = priority
        self.description = description
        self.originalRequest = request
        self.progress = TaskProgress()
        self.progress.bytesExpectedToSend = request.bodyLength
        self.createdAt = now
        self.version = 1
        self.owner = owner
    }

    /// The served JSON; the stored form (`StoredTask`) adds the owner.
    public func encode(to encoder: any Encoder) throws {
        try encode(to: encoder, stored: false)
    }

    /// `stored` adds what only the store keeps: the owner and the resume state.
    func encode(to encoder: any Encoder, stored: Bool) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(sessionId, forKey: .sessionId)
        try c.encode(kind, forKey: .kind)
        try c.encode(state, forKey: .state)
        try c.encode(phase, forKey: .phase)
        try c.encode(priority, forKey: .priority)
        try c.encode(networkServiceType, forKey: .networkServiceType)
        try c.encode(schedulingClass, forKey: .schedulingClass)
        try c.encode(preemptions, forKey: .preemptions)
        try c.encode(earliestBeginDate, forKey: .earliestBeginDate)
        try c.encode(description, forKey: .description)
        try c.encode(originalRequest, forKey: .originalRequest)
        try c.encode(currentRequest, forKey: .currentRequest)
        try c.encode(response, forKey: .response)
        try c.encode(cacheStatus, forKey: .cacheStatus)
        try c.encode(checksum, forKey: .checksum)
        try c.encode(digest, forKey: .digest)
        try c.encode(progress, forKey: .progress)
        try c.encode(error, forKey: .error)
        try c.encode(location, forKey: .location)
        try c.encode(destination, forKey: .destination)
        try c.encode(conflict, forKey: .conflict)
        try c.encode(bodyStream, forKey: .bodyStream)
        try c.encode(resumable, forKey: .resumable)
        try c.encode(retryCount, forKey: .retryCount)
        try c.encode(bandwidthLimit, forKey: .bandwidthLimit)
        try c.encode(responseDisposition, forKey: .responseDisposition)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(startedAt, forKey: .startedAt)
        try c.encode(completedAt, forKey: .completedAt)
        try c.encode(version, forKey: .version)
        try c.encode(segments, forKey: .segments)
        try c.encode(mirrors, forKey: .mirrors)
        try c.encode(decisions, forKey: .decisions)
        try c.encode(decision, forKey: .decision)
        try c.encode(dataInEvents, forKey: .dataInEvents)
        if stored {
            try c.encodeIfPresent(owner, forKey: .owner)
            try c.encodeIfPresent(resume, forKey: .resume)
            try c.encodeIfPresent(sealedLogin, forKey: .sealedLogin)
            try c.encodeIfPresent(streamedBody, forKey: .streamedBody)
        }
    }

    public func isVisible(to requester: String?) -> Bool { owner == nil || owner == requester }
}

/// What `GET /v1/tasks/{tid}/progress` serves: the moving parts of a task and its version.
public struct ProgressSnapshot: Codable, Sendable, Equatable {
    public var taskId: Int
    public var state: TaskState
    public var phase: TaskPhase
    public var progress: TaskProgress
    @NullEncoded public var error: TaskError?
    public var version: Int

    package init(_ task: TransferTask) {
        taskId = task.id
        state = task.state
        phase = task.phase
        progress = task.progress
        error = task.error
        version = task.version
    }
}
