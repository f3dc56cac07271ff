package import FoundationEssentials
package import TransferModel

/// Everything the engine needs to run one task's transfer, decided by the service beforehand.
package struct TransferJob: Sendable {
    let taskId: Int
    var request: RequestInfo
    var body: Data?
    /// A body streamed from these segments instead (a blob, a file, a form).
    var streamedBody: [BodySegment]? = nil
    /// A body the client streams in chunks, read from its spool file as they arrive.
    package var bodyStream: BodyStreamSnapshot? = nil
    /// Seconds left of timeoutIntervalForResource.
    let resourceTimeout: Double
    /// A data task's body is held in memory; beyond this it fails with dataLengthExceedsMaximum.
    let maxBodySize: Int
    /// How far a Content-Encoding may inflate the body (`ServiceConfiguration.decodedSizeLimit`).
    package var decodedSizeLimit = DecodedSizeLimit()
    let startPaused: Bool
    /// Set for download tasks: the body goes to this file, never into memory.
    package var download: DownloadTarget? = nil
    /// Set to continue a download from its partial file with a ranged request.
    package var resume: ResumeState? = nil
    /// Whether a download's progress is checkpointed (synced and recorded); not for ephemeral sessions.
    package var checkpoints = true
    /// Where a streamed body starts sending: a tus PATCH continues at the server's offset.
    var streamedBodyOffset = 0
    /// Whether curl may send a streamed body again (a 307/308, or a retry after a reused
    /// connection died before answering).
    var bodyRewinds = true
    /// Set for a tus upload: `request` is its creation request, this is where it stands.
    package var tus: ResumableUpload? = nil
    /// URLSessionTask.priority (0 to 1): the HTTP/2 stream weight.
    var priority = TaskPriority.default.value
    /// The task's own rate limit (nil: only the daemon-wide limits apply).
    var bandwidthLimit: BandwidthLimit? = nil
    /// Its session's cookie jar and policy; nil when cookies are off for it.
    package var cookies: (any CookieHandling)? = nil
    /// Whose connection pool it uses (`Session.connectionPool`, `ConnectionPools`).
    var connectionPool: String? = nil
    /// The stored credentials that may answer a 401 (nil: none are looked up, as for tus steps).
    package var credentials: (any CredentialSource)? = nil
    /// The user and password the task's URL carried, sent as curl sends them (`URLLogin`).
    package var urlLogin: URLLogin? = nil
    /// How the task answered challenges so far, and the credential this attempt sends.
    var challenges = ChallengeResponder()
    /// The session's proxies and TLS settings.
    var network = TransferNetwork()
    /// The folders `file:` URLs may read (resolved when the task starts); empty: file: is off.
    package var fileURLRoots: [String] = []
    /// The known_hosts file sftp: host keys are checked against (`ServiceConfiguration.sshKnownHostsFile`).
    package var sshKnownHostsFile = "/nonexistent/.ssh/known_hosts"
    /// A data task's declared answer to its final response (nil: allow).
    package var responseDisposition: ResponseDisposition? = nil
    /// Where a data task's body goes if its disposition makes it a download (set only then).
    package var conversionTarget: DownloadTarget? = nil
    /// The digest a data task's body must have (a download's is in its `DownloadTarget`).
    package var checksum: Checksum? = nil
    /// A download's connections at once as its task asked (nil: `sessionSegments`, its session's
    /// `maximumSegmentsPerDownload`) and its mirrors (`SegmentedDownload`).
    package var segments: Int? = nil
    package var sessionSegments = 1
    package var mirrors: [String] = []
    /// The callbacks the client decides live: the transfer stops there and reports a
    /// `.decision`, then waits for `EngineCommand.decide` (`Transfer+Decisions`).
    package var decisions = DecisionSet()
    /// A data task's body as it arrives, shared with the readers that follow it (nil: the body
    /// is only kept for the completion).
    package var liveBody: LiveBody? = nil
    /// A server certificate the client accepted by its key at a server-trust decision: its
    /// origin's connections skip the chain's verification and must present that key.
    var acceptedServerTrust: (origin: ChallengeOrigin, pin: String)? = nil
    /// Redirects followed before this request (a redirect the client decided starts a new
    /// transfer, which counts on from here toward the limit).
    var redirectsSoFar = 0

    /// The memberwise initializer, for the layers above.
    package init(
        taskId: Int,
        request: RequestInfo,
        body: Data? = nil,
        streamedBody: [BodySegment]? = nil,
        bodyStream: BodyStreamSnapshot? = nil,
        resourceTimeout: Double,
        maxBodySize: Int,
        startPaused: Bool,
        download: DownloadTarget? = nil,
        resume: ResumeState? = nil,
        checkpoints: Bool = true,
        streamedBodyOffset: Int = 0,
        bodyRewinds: Bool = true,
        tus: ResumableUpload? = nil,
        bandwidthLimit: BandwidthLimit? = nil,
        cookies: (any CookieHandling)? = nil,
        connectionPool: String? = nil,
        credentials: (any CredentialSource)? = nil,
        urlLogin: URLLogin? = nil,
        fileURLRoots: [String] = [],
        sshKnownHostsFile: String = "/nonexistent/.ssh/known_hosts",
        responseDisposition: ResponseDisposition? = nil,
        conversionTarget: DownloadTarget? = nil,
        checksum: Checksum? = nil
    ) {
        self.taskId = taskId
        self.request = request
        self.body = body
        self.streamedBody = streamedBody
        self.bodyStream = bodyStream
        self.resourceTimeout = resourceTimeout
        self.maxBodySize = maxBodySize
        self.startPaused = startPaused
        self.download = download
        self.resume = resume
        self.checkpoints = checkpoints
        self.streamedBodyOffset = streamedBodyOffset
        self.bodyRewinds = bodyRewinds
        self.tus = tus
        self.bandwidthLimit = bandwidthLimit
        self.cookies = cookies
        self.connectionPool = connectionPool
        self.credentials = credentials
        self.urlLogin = urlLogin
        self.fileURLRoots = fileURLRoots
        self.sshKnownHostsFile = sshKnownHostsFile
        self.responseDisposition = responseDisposition
        self.conversionTarget = conversionTarget
        self.checksum = checksum
    }
}

/// What a transfer reports, in order, on the engine thread.
package enum TransferUpdate: Sendable {
    /// The engine took the job and is connecting.
    case connecting
    /// A redirect followed: by libcurl, or as the client decided (`decided`: its decision event
    /// told it already), with the headers a rewrite gave (nil: unchanged).
    case redirect(statusCode: Int, from: String, to: String, method: String, headers: [String: String]? = nil, decided: Bool = false)
    /// A 401 challenged the request (didReceiveChallenge); reported before its response, if any.
    case challenge(ChallengeReport)
    case response(ResponseInfo)
    /// The data task's disposition made it a download (right after its response): from here on
    /// its bytes go to a partial file and it reports as a download.
    case becameDownload
    /// Coalesced: bytes since the last report, totals, and the current speed.
    case received(bytes: Int, total: Int, expected: Int?, bytesPerSecond: Double)
    case sent(bytes: Int, total: Int, expected: Int?)
    /// A resumed download continues at `offset` (0 when the server sent the whole resource).
    case resumed(offset: Int, expectedTotal: Int?)
    /// A download's bytes up to `state.offset` are on disk (fdatasync done): a restart may resume there.
    case checkpoint(ResumeState)
    /// A client-streamed body has sent every byte it has (`sent` in all): it waits for a chunk.
    case needsBody(sent: Int)
    /// A suspended download let its connection go (suspended past its idle timeout): it is no
    /// longer in the engine; resuming starts it again from `state` (from zero when nil).
    case detached(ResumeState?)
    /// A tus upload's server-side state changed (upload created, offset confirmed): persist it.
    case uploadState(ResumableUpload)
    /// A tus upload continues at the server's `offset` after a HEAD (a failure or a restart).
    case uploadResumed(offset: Int, expectedTotal: Int, uploadURL: String)
    /// A tus upload's step failed with `error`; it asks the server where it stands and goes on.
    case uploadRetrying(attempt: Int, error: TaskError)
    /// The requests a transfer made, measured (reported as it ends, before any completion).
    case transactions([TransactionMetrics])
    /// A stream task's connection changed (`StreamConnection`).
    case stream(StreamUpdate)
    /// A segmented download wants more connections, or fewer, or gives some back.
    case segmentConnections(SegmentConnections)
    /// The transfer stopped at a callback the client decides (`TransferJob.decisions`) and waits
    /// for `EngineCommand.decide`; nothing else of it moves meanwhile.
    case decision(DecisionPoint)
    case completed(TransferOutcome)
}

/// What a transfer waits for the client to decide, with what URLSession passes to the callback.
package enum DecisionPoint: Sendable {
    /// willPerformHTTPRedirection: the 3xx (its body received whole) and the request it proposes.
    case redirect(response: ResponseInfo, url: String, method: String)
    /// didReceiveChallenge: the challenged space, failures so far, the stored credential the
    /// default handling would send (user only), and the 401.
    case challenge(ChallengeReport, response: ResponseInfo)
    /// didReceiveResponse of a data task: no body byte is taken until the answer.
    case response(ResponseInfo)
    /// didReceiveChallenge for the server's certificate (authenticationMethod ServerTrust),
    /// asked when the system's verification refused it: the chain as PEM, leaf first, and why.
    case serverTrust(ProtectionSpace, certificates: [String], error: String)
    /// willCacheResponse: the response about to be stored and where it would go. Asked by the
    /// service (the URL cache is its), never by a transfer.
    case cache(ResponseInfo, storagePolicy: String)

    package var kind: DecisionKind {
        switch self {
        case .redirect: .redirect
        case .challenge, .serverTrust: .challenge
        case .response: .response
        case .cache: .cache
        }
    }
}

/// How a transfer ended.
package enum TransferOutcome: Sendable {
    /// `body` is empty for downloads, whose bytes are in the file at `location`. `digest` is
    /// what the body or file hashed to (nil where nothing computed it, e.g. a tus step).
    case success(body: Data, response: ResponseInfo, location: String?, digest: TaskDigest? = nil)
    case failure(TaskError)
    /// A download that finished but found its destination taken (`DownloadConflict.fail`):
    /// it fails with `error`, its file kept at `location`, the task's default location.
    case destinationTaken(TaskError, response: ResponseInfo, location: String, digest: TaskDigest?)
    /// A download that stopped part-way and can continue: its partial file is kept.
    case interrupted(TaskError, ResumeState)
}

/// Hears every transfer's updates. Called on the engine thread: must not block.
extension TransferOutcome {
    /// How a download ends once its file is verified and put in place (`DownloadFile.finish`).
    static func finished(_ file: DownloadFile, response: ResponseInfo) throws(TaskError) -> TransferOutcome {
        switch try file.finish(suggestedFilename: response.suggestedFilename) {
        case .placed(let location):
            return .success(body: Data(), response: response, location: location, digest: file.finalDigest)
        case .keptAside(let location, let error):
            return .destinationTaken(error, response: response, location: location, digest: file.finalDigest)
        }
    }
}

package protocol TransferObserver: Sendable {
    func transfer(_ taskId: Int, _ update: TransferUpdate)
    /// Several updates, in the order reported (`UpdateRelay` hands over what queued meanwhile).
    func transfers(_ batch: [(taskId: Int, update: TransferUpdate)])
    /// The engine loop's turn begins and ends: an observer that queues updates for another
    /// thread may hand over the turn's updates together (`UpdateRelay`). Engine thread only.
    func holdUpdates()
    func releaseUpdates()
    /// A download's file to verify and place; the completion it ends in is reported after it,
    /// in order with the updates reported before (`FilePlacement`). Engine thread only.
    func place(_ taskId: Int, _ placement: FilePlacement)
    /// These tasks' transfers ended; their completions follow, in order with their other
    /// updates. Told first by `UpdateRelay`, so that the connections they held go to the next
    /// tasks while their files are placed and their completions recorded.
    func transfersEnded(_ taskIds: [Int])
}

extension TransferObserver {
    package func transfers(_ batch: [(taskId: Int, update: TransferUpdate)]) {
        for (taskId, update) in batch { transfer(taskId, update) }
    }

    package func holdUpdates() {}
    package func releaseUpdates() {}
    package func transfersEnded(_ taskIds: [Int]) {}

    /// Places the file on the calling thread and reports the completion.
    package func place(_ taskId: Int, _ placement: FilePlacement) {
        transfer(taskId, .completed(placement.complete()))
    }
}

/// Commands other threads post to the engine thread.
package enum EngineCommand: Sendable {
    case start(TransferJob)
    case pause(taskId: Int)
    case resume(taskId: Int)
    /// With `keepPartial`, a download keeps its partial file and reports resume data.
    case cancel(taskId: Int, keepPartial: Bool)
    /// The scheduler gave the slot of this (background download) transfer to a higher class: it
    /// lets its connection go as a long-suspended download does (reported as `detached`).
    case preempt(taskId: Int)
    /// A client-streamed body grew to `available` bytes (and may have ended).
    case bodyAvailable(taskId: Int, available: Int, ended: Bool)
    /// The task's priority changed: re-sets its HTTP/2 stream weight.
    case setPriority(taskId: Int, priority: Double)
    /// The task's own rate limit changed (nil: none).
    case setBandwidthLimit(taskId: Int, BandwidthLimit?)
    /// The daemon-wide rate limits changed.
    case setLimits(BandwidthLimits)
    /// The session's future requests use new connections (reset, flush): a new, empty pool.
    case renewConnections(pool: String)
    /// The session was invalidated: its own pool (if any) closes once its transfers end.
    case forgetConnections(pool: String)
    /// Opens a stream task's connection (`StreamConnection`).
    case openStream(StreamJob)
    /// A client's read, write, close or start-tls on a stream task.
    case stream(StreamCommand)
    /// The scheduler granted a segmented download one more connection to `origin`
    /// (`SegmentConnections`).
    case grantConnection(taskId: Int, origin: String)
    /// The client's (or the timeout's default) answer to the decision the transfer waits for.
    case decide(taskId: Int, DecisionAnswer)
}
