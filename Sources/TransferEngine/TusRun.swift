internal import FoundationEssentials
internal import TransferModel

/// One tus upload task in the engine: its protocol state, the task's job, and what happens
/// between steps (a backoff, a client's suspend). Each step is a `Transfer` of its own, built from
/// `job(for:)`. Not Sendable: created, driven and dropped by `EngineLoop` only.
final class TusRun {
    var upload: TusUpload
    /// The task's job: its request is the creation request, its body the whole upload.
    var job: TransferJob
    /// The whole body as segments (inline bodies become one), so a PATCH can start anywhere.
    let segments: [BodySegment]
    /// When the run started (monotonic seconds): timeoutIntervalForResource spans every step.
    let startedAt: Double
    /// While waiting out a backoff: when the next step may start.
    var nextStepAt: Double?
    /// Suspended by the client: no new step starts until it is resumed.
    var paused = false
    /// The last step's response and body: the task's once the upload completes.
    var lastResponse: (ResponseInfo, Data)?

    init(job: TransferJob, state: ResumableUpload, now: Double) {
        self.job = job
        segments = job.streamedBody ?? [.bytes(job.body ?? Data())]
        upload = TusUpload(creationURL: job.request.url, length: segments.reduce(0) { $0 + $1.size }, state: state)
        startedAt = now
    }

    /// Header fields the protocol sets; the client's own values of these are dropped.
    private static let protocolHeaders: Set<String> = [
        "content-type", "content-length", "transfer-encoding", "tus-resumable", "upload-length", "upload-offset", "upload-defer-length",
    ]

    /// The job of one step: the client's headers (credentials, ...) plus the protocol's.
    /// Returns nil when timeoutIntervalForResource has run out.
    func job(for step: TusUpload.Step, now: Double) -> TransferJob? {
        let remaining = job.resourceTimeout - (now - startedAt)
        guard remaining > 0 else { return nil }
        var request = job.request
        var headers = request.headers.filter { !Self.protocolHeaders.contains($0.key.lowercased()) }
        headers["Tus-Resumable"] = TusUpload.version
        var streamed: [BodySegment]?
        switch step {
        case .create:
            request.method = "POST"
            headers["Upload-Length"] = String(upload.length)
            if let filename = upload.state.filename, !headers.keys.contains(where: { $0.lowercased() == "upload-metadata" }) {
                headers["Upload-Metadata"] = "filename " + Data(filename.utf8).base64EncodedString()
            }
        case .locate:
            request.method = "HEAD"
            request.url = upload.state.uploadURL ?? job.request.url
            headers = headers.filter { $0.key.lowercased() != "upload-metadata" }
        case .send(let offset):
            request.method = "PATCH"
            request.url = upload.state.uploadURL ?? job.request.url
            headers = headers.filter { $0.key.lowercased() != "upload-metadata" }
            headers["Upload-Offset"] = String(offset)
            headers["Content-Type"] = "application/offset+octet-stream"
            streamed = segments
        }
        request.headers = headers
        var stepJob = TransferJob(
            taskId: job.taskId, request: request, body: nil, streamedBody: streamed,
            resourceTimeout: remaining, maxBodySize: job.maxBodySize, startPaused: false)
        stepJob.cookies = job.cookies
        stepJob.network = job.network
        if case .send(let offset) = step {
            stepJob.streamedBodyOffset = offset
            // A resent PATCH would carry a stale Upload-Offset: the run asks HEAD instead.
            stepJob.bodyRewinds = false
        }
        return stepJob
    }
}
