internal import FoundationEssentials
internal import Curl
internal import Glibc
internal import Zlib
internal import TransferModel

/// One running transfer on the engine thread: its easy handle, the body received so far, and
/// the bookkeeping that turns libcurl callbacks into `TransferUpdate`s. Not Sendable: created,
/// driven and dropped by `EngineLoop` only.
package final class Transfer: EasyHandleDelegate {
    /// Redirect statuses libcurl follows (RFC 9110 15.4); 304 and 305 are final.
    package static let redirectStatuses: Set<Int> = [300, 301, 302, 303, 307, 308]
    static let maxRedirects = 16
    /// How often coalesced didReceiveData / didSendBodyData updates are reported.
    static let reportInterval = 0.1

    let job: TransferJob
    let handle: EasyHandle
    let report: (TransferUpdate) -> Void
    private var parser = ResponseHeadParser()
    private var headLimit = ResponseHeadLimit()
    /// The decoder of the final response's gzip or deflate coding (`Transfer+ContentCoding`); its
    /// output is bounded by `job.decodedSizeLimit`.
    var inflater: Inflater?
    // Internal rather than private where `Transfer+RemoteFile.swift` sets them too.
    var response: ResponseInfo?
    private var body = Data()
    /// The bytes of the body taken so far (into `body`, or `job.liveBody` when readers may follow).
    private var bodyCount = 0
    /// The partial file of a download (nil for data tasks, whose body is `body`, until their
    /// response disposition makes them a download).
    var file: DownloadFile?
    /// Whether the body goes to a file: a download task, or a data task that became one.
    var isDownload: Bool { file != nil }
    /// The reader of a streamed request body (nil when the body is inline or none).
    var bodyReader: BodyReader?
    /// The reader of a client-streamed body (nil for every other body).
    var streamReader: StreamBodyReader?
    /// Sending paused because every chunk so far is sent: a new chunk unpauses it.
    var waitsForBody = false
    /// The request body's size, inline or streamed (for didSendBodyData).
    var bodySize: Int?
    /// Where this transfer's bytes start in the file: a resumed download's offset, else 0.
    var base = 0
    /// The size of the whole resource, when the server said (Content-Length or Content-Range).
    var expectedTotal: Int?
    /// A 416 to a resumed request showed the partial file is already the whole resource.
    private var alreadyComplete = false
    /// A 416 for a partial file that is not whole, or a 206 that does not continue it: `EngineLoop`
    /// starts the download over from zero.
    var needsRestartFromZero = false
    /// Why the download starts over (a ranged answer that failed `RangedAnswer`), for the log.
    private(set) var restartReason: String?
    private(set) var redirects = 0
    /// The decision the transfer waits for (`Transfer+Decisions`), whether it was reported, the
    /// body of a 3xx or 401 under decision, and whether that body is the task's after all.
    var awaited: AwaitedDecision?
    var decisionReported = false
    var heldBody = Data()
    var replaysHeldBody = false
    /// Out of the multi handle while a decision is pending on a response that came whole.
    var parked = false
    private(set) var currentURL: String
    private(set) var currentMethod: String
    /// Whether the method goes out through CURLOPT_CUSTOMREQUEST, which curl keeps across
    /// redirects even where it switches the request to GET.
    private var sendsCustomMethod = false
    /// Set when the transfer is failed by us rather than by curl (body too large).
    var failure: TaskError?
    /// Set for ftp:, ftps: and sftp: URLs, which have no response head (`Transfer+RemoteFile.swift`).
    let remoteScheme: RemoteFileScheme?
    /// A remote file's modification time (seconds since 1970, as text), its resume validator.
    var remoteModified: String?
    /// An ftp: or ftps: upload's check of what the server stored.
    var storedSizeCheck: StoredSizeCheck?
    /// How this task answers 401 challenges, carried from attempt to attempt (`Transfer+Challenge`).
    var challenges: ChallengeResponder
    /// A 401 head not yet known to be final (libcurl may answer it itself).
    var heldUnauthorized: ResponseHead?
    /// Set once a challenge is to be answered: the job that makes the request again.
    var challengeRetry: TransferJob?
    /// The proxy of the current request, and whether it challenged (`Transfer+Network.swift`).
    var proxyState = ProxyState()

    /// The metrics of each request this transfer made (`TransactionRecorder`).
    var recorder = TransactionRecorder()
    private var received = 0
    private var unreportedReceived = 0

    /// Set while this transfer is one connection of a segmented download (`SegmentedDownload`):
    /// worker 0 is the task's own transfer, the others fetch ranges for it.
    weak var segmented: SegmentedDownload?
    var segmentWorker = 0
    /// Called once the final response shows the download can be segmented (`Transfer+Segments`).
    var onSegmentOffer: ((Transfer) -> Void)?

    /// Bytes another connection of this segmented download wrote: counted as this task's.
    func countPartBytes(_ count: Int) {
        received += count
        unreportedReceived += count
        lastActivity = EngineLoop.now()
    }
    private var sent = 0
    private var unreportedSent = 0
    private var lastReport = 0.0
    private var speed = SpeedMeter()

    /// The rate limits shared by every transfer (nil: none apply, as in tests of the transfer alone).
    private let governor: BandwidthGovernor?
    /// This transfer's own limit and whether it waits for tokens (`BandwidthGovernor`).
    var throttle: TransferThrottle
    /// The HTTP/2 stream weight libcurl took for it (from the task's priority).
    private(set) var streamWeight: Int?

    /// When a download's partial file was last synced and its offset reported (monotonic seconds).
    var lastCheckpoint = EngineLoop.now()
    /// The offset that checkpoint recorded, so an idle download is not synced again.
    private var checkpointedOffset = -1

    /// The state to record and a descriptor to fdatasync first, when a resumable download has
    /// moved since its last checkpoint.
    func checkpointCandidate() -> (ResumeState, Int32)? {
        // A segmented download moves in every part, not only at its contiguous offset.
        guard let file, let state = resumeState(), (segmented?.plan.written ?? state.offset) != checkpointedOffset else { return nil }
        let descriptor = file.duplicateDescriptor()
        guard descriptor >= 0 else { return nil }
        checkpointedOffset = segmented?.plan.written ?? state.offset
        return (state, descriptor)
    }

    /// When the client suspended it (monotonic seconds), nil while running.
    var pausedAt: Double?
    /// When a byte last moved (or the transfer started or resumed), monotonic seconds.
    /// timeoutInterval is an idle timeout and `EngineLoop` enforces it from this: curl's
    /// low-speed limit alone is not one, as it averages over a window of about 5 s, so bytes
    /// received just before a stall delay it (a 1 s timeout fired after 7 s).
    var lastActivity = EngineLoop.now()

    init(job: TransferJob, governor: BandwidthGovernor? = nil, report: @escaping (TransferUpdate) -> Void) throws {
        self.job = job
        self.report = report
        self.governor = governor
        throttle = TransferThrottle(limit: job.bandwidthLimit, background: job.request.networkServiceType == .background, now: EngineLoop.now())
        self.currentURL = job.request.url
        self.currentMethod = job.request.method
        redirects = job.redirectsSoFar
        remoteScheme = RemoteFileScheme(url: job.request.url)
        challenges = job.challenges
        let file = try job.download.map { target throws(TaskError) in
            try DownloadFile(target: target, resumeAt: job.resume?.offset ?? 0, keepingParts: job.resume?.parts != nil && job.segmentCount > 1)
        }
        self.file = file
        base = file?.written ?? 0
        handle = try EasyHandle()
        handle.delegate = self
        try configure()
    }

    private func configure() throws {
        let request = job.request
        try handle.set(.url(request.url))
        try handle.set(.allowedProtocols("http,https"))
        try handle.set(.allowedRedirectProtocols("http,https"))
        // A redirect the client decides ends this transfer; the answer starts the next one.
        try handle.set(.followRedirects(!decidesRedirect()))
        try handle.set(.maxRedirects(Self.maxRedirects))
        // Like URLSession: ask for compression and hand back decoded bytes, but decode them here
        // (`Transfer+ContentCoding`), so a body cut short is an error, not a short success.
        try handle.set(.acceptEncoding(Self.acceptedEncodings))
        try handle.set(.contentDecoding(false))
        try handle.set(.userAgent("transferd/0.1"))
        // 16 KiB reads (libcurl's default) cost a 1 GiB loopback download about 9 % against
        // curl, and with the checkpoint fdatasync about 23 %; 512 KiB reads beat curl (bench/).
        try handle.set(.receiveBufferSize(512 * 1024))
        try configureNetwork()
        try setStreamWeight(job.priority)
        // Best effort (0) is what an unmarked socket sends; a reused connection another type
        // marked is reset to it all the same (the multi handle's SocketMarks).
        let dscp = request.networkServiceType.dscp
        if dscp != 0 { try handle.set(.dscp(dscp)) }
        // timeoutIntervalForRequest is an idle timeout: fail when no byte moves for that long.
        // `EngineLoop.sweep` enforces it from `lastActivity`. curl's low-speed limit is not set:
        // it averages over its window, so a 1 byte/s trickle failed as "too slow" though a
        // byte came every second (issue 15).
        try handle.set(.connectTimeoutMilliseconds(Int(request.timeoutInterval * 1000)))
        try handle.set(.timeoutMilliseconds(max(1, Int(min(job.resourceTimeout, 315_360_000) * 1000))))
        if let remoteScheme { return try configureRemoteFile(remoteScheme) }

        let method = request.method.uppercased()
        if method == "HEAD" { try handle.set(.noBody(true)) }
        if let stream = job.bodyStream {
            // Sent as the client's chunks arrive; paused (not failed) while it has sent them all.
            let reader = StreamBodyReader(stream)
            streamReader = reader
            try sendThroughReadCallback(size: reader.length, method: method)
        } else if let segments = job.streamedBody {
            // Streamed through the read callback (files straight from disk), never held in memory.
            let reader = try BodyReader(segments, from: job.streamedBodyOffset)
            bodyReader = reader
            try sendThroughReadCallback(size: reader.size, method: method)
        } else if let body = job.body {
            bodySize = body.count
            try handle.set(.body(body))
        } else if method == "POST" || method == "PUT" || method == "PATCH" {
            try handle.set(.body(Data()))
        }
        if job.streamedBody != nil || job.bodyStream != nil {
            // The method was set with the streamed body above.
        } else if method != "GET" && method != "HEAD" && !(method == "POST" && job.body != nil) {
            try handle.set(.customRequest(request.method))
            sendsCustomMethod = true
        } else if method == "GET" && job.body != nil {
            try handle.set(.customRequest("GET"))
            sendsCustomMethod = true
        }
        // curl sends every body as a POST and would drop it on 301/302 while the custom method
        // stays; only a real POST turns into GET there (as URLSession), a PUT keeps its body.
        if job.body != nil && method != "POST" {
            try handle.set(.keepBodyOnRedirect(status301: true, status302: true, status303: false))
        }
        var lines = request.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let names = Set(request.headers.keys.map { $0.lowercased() })
        // curl would add "Expect: 100-continue" to large bodies and wait a second for servers that
        // never answer it; URLSession does not send it.
        if !names.contains("expect") { lines.append("Expect:") }
        if base > 0 {
            // Continue where the partial file ends; If-Range makes a changed resource come back
            // whole (200) rather than as a range of the new one (RFC 9110 13.1.5).
            lines.append("Range: bytes=\(base)-")
            if let validator = job.resume?.ifRange { lines.append("If-Range: \(validator)") }
        }
        try handle.set(.headers(lines))
        sendCookies(to: request.url)
        try configureCredential()
    }

    /// A body read through the read callback (`size` nil: unknown, sent chunked). curl sends
    /// such a body with PUT unless a custom method names another.
    private func sendThroughReadCallback(size: Int?, method: String) throws {
        bodySize = size
        try handle.set(.upload(size: size))
        if method != "PUT" {
            try handle.set(.customRequest(job.request.method))
            sendsCustomMethod = true
        }
    }

    // MARK: EasyHandleDelegate (engine thread, inside curl_multi_perform)

    func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: String) -> Bool {
        lastActivity = EngineLoop.now()
        if remoteScheme != nil {  // an FTP server's replies, not an HTTP head
            storedSizeCheck?.reply(line)
            return true
        }
        guard headLimit.count(line) else {
            failure = ResponseHeadLimit.exceeded
            return false
        }
        guard let head = parser.consume(line) else { return true }
        receivedHead(head)
        return true
    }

    /// A complete head: a 1xx, a redirect or challenge curl follows, or the final response.
    private func receivedHead(_ head: ResponseHead) {
        if (100..<200).contains(head.statusCode) || isProxyChallengeCurlAnswers(head) { return }
        recorder.headArrived(handle, url: currentURL, method: currentMethod, statusCode: head.statusCode, viaProxy: proxyState.route != nil)
        reportSentBeforeResponse()
        if holdsUnauthorized(head) {
            // libcurl may answer it itself (Digest) with another request to the same URL.
            exchangeCookies(head, answered: currentURL, next: currentURL)
            return
        }
        if decidesRedirect(), Self.redirectStatuses.contains(head.statusCode), head.value("Location") != nil, redirects >= Self.maxRedirects {
            // What libcurl's own limit does for a transfer that follows by itself.
            failure = TaskError(.httpTooManyRedirects, "more than \(Self.maxRedirects) redirects")
            return
        }
        if Self.redirectStatuses.contains(head.statusCode), let location = head.value("Location"),
           redirects < Self.maxRedirects, let target = URL(string: location, relativeTo: URL(string: currentURL))?.absoluteString {
            if decidesRedirect() {
                awaited = .redirect(head: head, target: target, method: proposedMethod(after: head.statusCode))
                decisionReported = false
                return
            }
            redirects += 1
            let from = currentURL
            // As browsers and URLSession: 303 turns any method into GET, 301/302 turn POST into GET.
            if head.statusCode == 303 && currentMethod != "HEAD" || (head.statusCode == 301 || head.statusCode == 302) && currentMethod == "POST" {
                currentMethod = "GET"
                // curl switches to GET for the next request but would still send the custom
                // method's name: clear it (curl reads it when it builds that request).
                if sendsCustomMethod {
                    try? handle.set(.customRequest(nil))
                    sendsCustomMethod = false
                }
            }
            currentURL = target
            exchangeCookies(head, answered: from, next: target)
            try? route(to: target)
            // A user and password a Location carries are never shown (`URLLogin`).
            report(.redirect(statusCode: head.statusCode, from: URLLogin.strip(from), to: URLLogin.strip(target), method: currentMethod))
            return
        }
        // A 401 may be followed by an authentication round to the same URL.
        exchangeCookies(head, answered: currentURL, next: currentURL)
        deliverFinal(head)
    }

    /// The head of the response the task gets (not a redirect, not a challenge answered).
    func deliverFinal(_ head: ResponseHead) {
        if let segmented, segmentWorker != 0 { return segmented.received(head, worker: segmentWorker) }
        let info = ResponseInfo(statusCode: head.statusCode, headers: head.joined, url: URLLogin.strip(handle.effectiveURL ?? currentURL))
        response = info
        // The response first, then how a resumed download goes on (URLSESSION.md's order:
        // response, resume offset, data), so didResumeAtOffset's totals are the last word.
        if job.decisions.contains(.response), file == nil, remoteScheme == nil {
            // The client decides instead of the declared rules: nothing is read until it has.
            // The decision is the response's report (didReceiveResponse with a decisionId).
            awaited = .response(info)
            decisionReported = false
            reportAwaitedDecision()
        } else {
            report(.response(info))
            applyDisposition(to: info)
        }
        startDecoding(head)
        file?.expectDigest(announcedBy: info, method: currentMethod)
        if let file {
            if base > 0 {
                continueResumed(head, file: file)
            } else if head.statusCode >= 400 {
                // URLSession turns a download's error status into an error, and keeps no file.
                failure = URLErrorMapping.downloadError(status: head.statusCode)
            } else if head.statusCode == 206 && !job.request.headers.keys.contains(where: { $0.lowercased() == "range" }) {
                // Part of a resource, to a request that asked for all of it: saved as the file,
                // it would be a wrong file reported as a success.
                failure = TaskError(.badServerResponse, "the server answered 206 (a part of the resource) to a request for all of it")
            } else {
                expectedTotal = info.expectedContentLength
                offerSegments(head)
            }
        }
    }

    /// A data task's declared answer to its final response: cancel ends it before any body
    /// byte is taken (the write callback fails the transfer); becomeDownload opens the partial
    /// file, so the body goes there and never into memory.
    private func applyDisposition(to info: ResponseInfo) {
        guard file == nil, let disposition = job.responseDisposition else { return }
        switch disposition.action(statusCode: info.statusCode, mimeType: info.mimeType, expectedLength: info.expectedContentLength) {
        case .allow:
            return
        case .cancel:
            failure = ResponseDisposition.cancelled
        case .becomeDownload:
            guard let target = job.conversionTarget else { return }
            do throws(TaskError) {
                file = try DownloadFile(target: target)
                report(.becameDownload)
            } catch {
                failure = error
            }
        }
    }

    /// Decides how a resumed download goes on from the server's answer to its ranged request.
    private func continueResumed(_ head: ResponseHead, file: DownloadFile) {
        switch head.statusCode {
        case 206:
            // Validated before a byte is written (`RangedAnswer`); one that does not continue
            // the partial file exactly is never appended: the download starts over from zero.
            switch RangedAnswer.check(contentRange: head.value("Content-Range"), contentLength: head.value("Content-Length"), etag: head.value("ETag"),
                                      lastModified: head.value("Last-Modified"), offset: base, resume: job.resume) {
            case .continues(let total):
                expectedTotal = total
                report(.resumed(offset: base, expectedTotal: total))
                if job.resume?.parts != nil { onSegmentOffer?(self) }  // the other parts go on too
            case .mismatch(let reason):
                restartReason = reason
                needsRestartFromZero = true
            }
        case 416:
            let total = ContentRange(head.value("Content-Range"))?.total
            if total == base {
                alreadyComplete = true
                expectedTotal = total
                report(.resumed(offset: base, expectedTotal: total))
            } else {
                needsRestartFromZero = true
            }
        case 400...:
            failure = URLErrorMapping.downloadError(status: head.statusCode)
        default:
            // Range ignored, or the resource changed (If-Range failed): the whole resource
            // follows, so start the file again (a new one: `DownloadFile.startOver`).
            file.startOver()
            base = 0
            expectedTotal = response?.expectedContentLength
            report(.resumed(offset: 0, expectedTotal: expectedTotal))
        }
    }

    func easyHandle(_ handle: EasyHandle, didReceive bytes: RawSpan) -> WriteDisposition {
        if swallowsChallengeBody() { return .accept }
        if failure != nil { return .fail }
        if let held = holdForDecision(bytes) { return held }
        if remoteScheme != nil { deliverRemoteResponse() }
        // Neither a 416's own body nor a range of another version belongs in the file: the
        // transfer ends here, and `EngineLoop` starts it over without a range.
        if needsRestartFromZero { return .fail }
        if alreadyComplete { return .accept }
        // Out of tokens: curl keeps the chunk and hands it back once the governor releases us.
        // Rates and metrics count the bytes as they came off the wire, before any decoding.
        if let governor {
            let now = EngineLoop.now()
            guard governor.mayMove(job.taskId, &throttle, .download, now: now) else { return .pause }
            governor.moved(job.taskId, bytes.byteCount, &throttle, .download, now: now)
        }
        recorder.bodyReceived(bytes.byteCount)
        lastActivity = EngineLoop.now()
        guard inflater != nil else { return take(bytes) ? .accept : .fail }
        return decode(bytes) ? .accept : .fail
    }

    /// Keeps body bytes (decoded, when the response had a Content-Encoding transferd decodes):
    /// into the partial file, or into memory for a data task. False fails the transfer.
    func take(_ bytes: RawSpan) -> Bool {
        if let segmented { return segmented.take(bytes, from: self) }
        if let file {
            if let total = announcedLength, base + received + bytes.byteCount > total {
                failure = TaskError(.badServerResponse, "the server sent more than the \(total) bytes it announced")
                return false
            }
            guard file.write(bytes) else {
                failure = TaskError(.cannotWriteToFile, "cannot write the download: \(FileSystem.lastError)")
                return false
            }
        } else if bodyCount + bytes.byteCount <= job.maxBodySize {
            if let live = job.liveBody {
                bytes.withUnsafeBytes { live.append($0) }
            } else {
                bytes.withUnsafeBytes { body.append(contentsOf: $0) }
            }
            bodyCount += bytes.byteCount
        } else {
            failure = TaskError(.dataLengthExceedsMaximum, "the response body exceeds the \(job.maxBodySize)-byte limit for data tasks")
            return false
        }
        received += bytes.byteCount
        if let inflater, job.decodedSizeLimit.isExceeded(decoded: received, encoded: inflater.consumed) {
            failure = job.decodedSizeLimit.error(decoded: received, encoded: inflater.consumed)
            return false
        }
        unreportedReceived += bytes.byteCount
        return true
    }

    func easyHandle(_ handle: EasyHandle, fill buffer: inout MutableRawSpan) -> ReadDisposition {
        if remoteScheme != nil { recorder.sending(handle) }  // its response is made after the connection is let go
        if let streamReader {
            switch streamReader.fill(&buffer) {
            case .bytes(let count):
                lastActivity = EngineLoop.now()
                return .filled(count)
            case .end:
                return .filled(0)
            case .wait:
                // The idle timeout still runs: a client that sends no chunk for that long fails
                // the task with timedOut, as a stalled body stream does in URLSession.
                if !waitsForBody {
                    waitsForBody = true
                    report(.needsBody(sent: streamReader.sent))
                }
                return .pause
            case .failed:
                failure = TaskError(.fileDoesNotExist, "cannot read the streamed body's spool file: \(FileSystem.lastError)")
                return .abort
            }
        }
        guard let count = bodyReader?.fill(&buffer) else {
            failure = TaskError(.noPermissionsToReadFile, "cannot read the request body's file: \(FileSystem.lastError)")
            return .abort
        }
        lastActivity = EngineLoop.now()
        return .filled(count)
    }

    func easyHandle(_ handle: EasyHandle, rewindBodyTo offset: Int) -> Bool {
        guard job.bodyRewinds else { return false }
        return streamReader?.rewind(to: offset) ?? bodyReader?.rewind(to: offset) ?? false
    }

    func easyHandle(_ handle: EasyHandle, progress: TransferCounters) -> Bool {
        // curl counts a chunked body's framing too; a streamed body's own bytes are what it read.
        let uploaded = streamReader?.sent ?? progress.uploaded
        if uploaded > sent {
            lastActivity = EngineLoop.now()
            unreportedSent += uploaded - sent
            throttleUpload(moved: uploaded - sent)
            sent = uploaded
        }
        return true
    }

    /// The body went before its answer: its last bytes are reported before the response
    /// (URLSESSION.md's order), not with the next coalesced report after it. The progress
    /// callback may not have seen them yet, so curl's own count is read.
    private func reportSentBeforeResponse() {
        let uploaded = streamReader?.sent ?? handle.bytesUploaded
        if uploaded > sent {
            unreportedSent += uploaded - sent
            throttleUpload(moved: uploaded - sent)
            sent = uploaded
        }
        if unreportedSent > 0 { reportProgress(now: EngineLoop.now(), force: true) }
    }

    /// Uploads are counted after they went (curl sends an inline body without asking the read
    /// callback): the bytes are taken, and when tokens ran out sending pauses until the
    /// governor releases it. A client-suspended transfer is paused in both directions already
    /// (pausing sending alone would unpause receiving).
    private func throttleUpload(moved bytes: Int) {
        guard let governor else { return }
        let now = EngineLoop.now()
        governor.moved(job.taskId, bytes, &throttle, .upload, now: now)
        let bodyLeft = bodySize.map { sent + bytes < $0 } ?? true
        guard bodyLeft, pausedAt == nil, !governor.mayMove(job.taskId, &throttle, .upload, now: now) else { return }
        try? handle.pauseSending()
    }

    /// The task's own rate limit changed (PATCH); it applies from the next chunk.
    func setBandwidthLimit(_ limit: BandwidthLimit?) {
        throttle.set(limit, now: EngineLoop.now())
    }

    /// The task's priority changed: over HTTP/2, curl sends the new weight in a PRIORITY frame
    /// the next time it sends or reads for this stream (see `EasyOption.streamWeight`).
    func setPriority(_ priority: Double) {
        try? setStreamWeight(priority)
    }

    private func setStreamWeight(_ priority: Double) throws {
        let weight = StreamWeight.forPriority(priority)
        try handle.set(.streamWeight(weight))
        streamWeight = weight
    }

    // MARK: reporting

    /// Reports coalesced byte counts if any are pending and the interval passed (or `force`).
    /// Returns true while counts remain unreported (the loop then polls briefly).
    @discardableResult
    func reportProgress(now: Double, force: Bool = false) -> Bool {
        guard unreportedReceived > 0 || unreportedSent > 0 else { return false }
        guard force || now - lastReport >= Self.reportInterval else { return true }
        lastReport = now
        if unreportedSent > 0 {
            report(.sent(bytes: unreportedSent, total: sent, expected: bodySize))
            unreportedSent = 0
        }
        if unreportedReceived > 0 {
            speed.record(total: received, at: now)
            let expected = file == nil ? response?.expectedContentLength : expectedTotal
            report(.received(bytes: unreportedReceived, total: receivedTotal, expected: expected, bytesPerSecond: speed.bytesPerSecond))
            unreportedReceived = 0
        }
        return false
    }

    /// The bytes of the file so far, as progress reports them. A segmented download's connections
    /// may fetch a byte twice (a dropped source's range fetched again, the first GET reading on
    /// over parts the others wrote), so its count is what its plan holds, never less than the
    /// last report (the first GET taking over from a gap would make it go back), never more
    /// than the file.
    private var receivedTotal: Int {
        guard let segmented else { return base + received }
        reportedPlanBytes = max(reportedPlanBytes, segmented.plan.written)
        return reportedPlanBytes
    }
    private var reportedPlanBytes = 0

    /// The outcome once libcurl reported the transfer done with `code`, the file placed now.
    func outcome(_ code: CurlCode) -> TransferOutcome {
        switch ending(code) {
        case .outcome(let outcome): outcome
        case .place(let placement): placement.complete()
        }
    }

    /// How the transfer ends once libcurl reported it done with `code`: a download that
    /// succeeded leaves its file to be verified and placed (`FilePlacement`).
    func ending(_ code: CurlCode) -> TransferEnding {
        if let failure {
            file?.discard()
            return .outcome(.failure(failure))
        }
        // curl reads a header line into a 100 KiB buffer and fails a longer one as out of memory.
        if code == .outOfMemory && response == nil {
            file?.discard()
            return .outcome(.failure(ResponseHeadLimit.lineTooLong))
        }
        guard code.isOK else { return .outcome(interrupted(transportError(code))) }
        if let error = decodingEndedEarly() {
            file?.discard()
            return .outcome(.failure(error))
        }
        if let total = announcedLength, base + received < total {
            // A body without a length (close-delimited, chunked) that ended early: what arrived
            // is the start of the file, so it stays for a resume, as after a dropped connection.
            return .outcome(interrupted(TaskError(.networkConnectionLost, "the server ended the body after \(base + received) of its \(total) bytes")))
        }
        let info = response ?? ResponseInfo(statusCode: handle.responseCode, headers: [:], url: URLLogin.strip(handle.effectiveURL ?? currentURL))
        guard let file else { return .outcome(.verifiedBody(job.liveBody?.contents ?? body, response: info, method: currentMethod, checksum: job.checksum)) }
        return .place(FilePlacement(file: file, response: info))
    }

    /// The length a resumed download's file must end at: the total of the Content-Range that
    /// `RangedAnswer` accepted. libcurl holds a body to its Content-Length, but a 206 without
    /// one (close-delimited, chunked) may end early or run on, and the file would then be
    /// reported complete at the wrong length. Not for a segmented download (its plan counts
    /// its parts) nor FTP and SFTP (libcurl checks their sizes). A 200 has libcurl's check.
    var announcedLength: Int? {
        guard base > 0, file != nil, segmented == nil, inflater == nil, remoteScheme == nil, !alreadyComplete,
              response?.statusCode == 206, let total = expectedTotal, total >= 0 else { return nil }
        return total
    }

    /// Every request this transfer made, the last one ended now (call once, as it ends).
    func finishMetrics() -> [TransactionMetrics] {
        recorder.finish(handle, url: currentURL, method: currentMethod, viaProxy: proxyState.route != nil)
    }

    /// Deletes a download's partial file (the transfer was cancelled or timed out).
    func discardPartialFile() { file?.discard() }

    /// How a transfer cut short by `error` ends: a download that can continue keeps its partial
    /// file and says where it stands; anything else is a plain failure.
    func interrupted(_ error: TaskError) -> TransferOutcome {
        guard let state = resumeState() else {
            file?.discard()
            return .failure(error)
        }
        return .interrupted(error, state)
    }

    /// Where a download stands, if it can be resumed: it needs a validator (a strong ETag or
    /// Last-Modified) so that a later ranged request can tell whether the resource changed.
    func resumeState() -> ResumeState? {
        // A range counts bytes of the encoded representation, the file holds decoded bytes:
        // a content-coded download cannot continue, it starts over.
        guard let file, failure == nil, !needsRestartFromZero, inflater == nil else { return nil }
        if remoteScheme != nil { return remoteResumeState(file) }
        guard let response else {
            // A resumed download that got no answer yet (it could not connect): the partial file
            // is as the last attempt left it, and so is what it was resumed from.
            guard base > 0, var state = job.resume else { return nil }
            state.offset = file.written
            return state
        }
        guard response.statusCode < 300 else { return nil }
        let headers = response.headers
        let etag = ResponseInfo.value(of: "ETag", in: headers) ?? (base > 0 ? job.resume?.etag : nil)
        let lastModified = ResponseInfo.value(of: "Last-Modified", in: headers) ?? (base > 0 ? job.resume?.lastModified : nil)
        // A segmented download's offset is its bytes from 0 without a gap (what a plain resume
        // may continue from); its parts say where each range stands.
        var state = ResumeState(offset: segmented?.plan.contiguous ?? file.written, etag: etag, lastModified: lastModified, expectedLength: expectedTotal)
        state.parts = segmented?.resumeParts
        return state.ifRange == nil ? nil : state
    }


    /// A client-streamed body grew: update the expected length for progress once it ended.
    func bodyGrew(available: Int, ended: Bool) {
        streamReader?.update(available: available, ended: ended)
        if ended, let length = streamReader?.length { bodySize = length }
    }

    /// Starts the sample window afresh (after a pause the old samples would understate speed).
    func resetSpeed() { speed.reset() }
}
