internal import FoundationEssentials
internal import TransferModel

/// The tus 1.0.0 client protocol of one upload task (core protocol and creation extension), as
/// a value: each answer of the server (or a transport failure) goes in, the next step comes out.
/// It does no I/O, so every rule is testable without a server; `TusRun` drives it on the engine
/// thread.
/// - SeeAlso: https://tus.io/protocols/resumable-upload
struct TusUpload: Sendable {
    /// The request a step sends.
    enum Step: Equatable, Sendable {
        /// POST to the creation URL with Upload-Length: the server makes the upload resource.
        case create
        /// HEAD of the upload resource: how many bytes the server has (Upload-Offset).
        case locate
        /// PATCH of the body's bytes from `offset` to the end.
        case send(from: Int)
    }

    /// How a step ended.
    enum StepResult: Sendable {
        /// The server answered (any status); `headers` as received, joined per name.
        case answered(status: Int, headers: [String: String])
        /// No answer: the transfer failed (reset, stall, refused connection, ...).
        case failed(TaskError)
    }

    /// What to do next.
    enum Action: Equatable, Sendable {
        /// Send `step`, after `delay` seconds (a backoff after a failure; 0: at once).
        case perform(Step, delay: Double)
        /// Done: the last step's response is the task's response.
        case complete
        /// The upload cannot go on.
        case fail(TaskError)
    }

    /// Failed attempts allowed in one run of the task before it fails (bounded retries).
    static let maxFailures = 6
    /// The first backoff; it doubles per failure, up to `maxBackoff`.
    static let firstBackoff = 0.25
    static let maxBackoff = 4.0
    static let version = "1.0.0"

    /// The creation URL (the task's request URL).
    let creationURL: String
    /// The body's size: Upload-Length.
    let length: Int
    /// The server-side state: the upload URL and the confirmed offset.
    private(set) var state: ResumableUpload
    /// The step in flight (or waiting for its backoff).
    private(set) var step: Step
    /// Failures so far in this run.
    private(set) var failures = 0

    /// A known upload URL (from an earlier run) is asked for its offset first; otherwise the
    /// upload is created.
    init(creationURL: String, length: Int, state: ResumableUpload) {
        self.creationURL = creationURL
        self.length = length
        self.state = state
        step = state.uploadURL == nil ? .create : .locate
    }

    mutating func next(after result: StepResult) -> Action {
        switch result {
        case .failed(let error):
            guard Self.isTransient(error) else { return .fail(error) }
            return retry(error)
        case .answered(let status, let headers):
            if status == 412 {
                let versions = ResponseInfo.value(of: "Tus-Version", in: headers).map { " (it supports \($0))" } ?? ""
                return .fail(TaskError(.badServerResponse, "the server does not accept tus version \(Self.version)\(versions): 412 Precondition Failed"))
            }
            switch step {
            case .create: return created(status, headers)
            case .locate: return located(status, headers)
            case .send(let from): return sent(from: from, status, headers)
            }
        }
    }

    /// The answer to the creation POST: 201 with Location.
    private mutating func created(_ status: Int, _ headers: [String: String]) -> Action {
        guard status == 201 else { return status >= 500 ? retry(serverError("POST", status)) : .complete }
        guard let location = ResponseInfo.value(of: "Location", in: headers),
              let url = URL(string: location, relativeTo: URL(string: creationURL))?.absoluteString else {
            return .fail(TaskError(.badServerResponse, "the tus server answered the creation request with 201 but no usable Location"))
        }
        state.uploadURL = url
        state.offset = 0
        return go(.send(from: 0))
    }

    /// The answer to HEAD: 200 or 204 with Upload-Offset; 404, 410 or 403 mean the upload is
    /// gone (expired, deleted), so a new one is made (tus 1.0.0, HEAD).
    private mutating func located(_ status: Int, _ headers: [String: String]) -> Action {
        switch status {
        case 200, 204:
            guard let offset = Self.offset(in: headers), offset <= length else {
                return .fail(TaskError(.badServerResponse, "the tus server's answer to HEAD has no valid Upload-Offset for a \(length)-byte upload"))
            }
            if let declared = ResponseInfo.value(of: "Upload-Length", in: headers).flatMap({ Int($0) }), declared != length {
                return .fail(TaskError(.badServerResponse, "the upload at \(state.uploadURL ?? "?") has Upload-Length \(declared), this task's body \(length) bytes"))
            }
            state.offset = offset
            return offset == length ? .complete : go(.send(from: offset))
        case 403, 404, 410:
            return startOver()
        case 500...:
            return retry(serverError("HEAD", status))
        default:
            return .fail(TaskError(.badServerResponse, "the tus server answered HEAD of the upload with \(status)"))
        }
    }

    /// The answer to PATCH: 204 with the new Upload-Offset.
    private mutating func sent(from start: Int, _ status: Int, _ headers: [String: String]) -> Action {
        switch status {
        case 200, 204:
            guard let offset = Self.offset(in: headers), (start...length).contains(offset) else {
                return .fail(TaskError(.badServerResponse, "the tus server's answer to PATCH has no valid Upload-Offset (sent from \(start) of \(length))"))
            }
            state.offset = offset
            if offset == length { return .complete }
            // A server may take part of a PATCH and end it early: send the rest. No progress at
            // all counts as a failure, so a server that never takes anything ends the task.
            return offset > start ? go(.send(from: offset)) : retry(TaskError(.badServerResponse, "the tus server took none of the PATCH from \(start)"))
        case 409:
            // Our offset is not the server's: ask for it.
            return retry(TaskError(.badServerResponse, "the tus server refused the offset \(start) (409 Conflict)"))
        case 403, 404, 410:
            return startOver()
        case 415:
            return .fail(TaskError(.badServerResponse, "the tus server refused Content-Type application/offset+octet-stream (415)"))
        case 500...:
            return retry(serverError("PATCH", status))
        default:
            // Another status (413, 401, ...) is the server's verdict: the task ends with it, as
            // URLSession hands back any HTTP status.
            return .complete
        }
    }

    /// The upload resource is gone: forget it and create a new one, from zero. Counted as a
    /// failure, so a server that loses every upload cannot keep the task going for ever.
    private mutating func startOver() -> Action {
        state.uploadURL = nil
        state.offset = 0
        return retry(TaskError(.badServerResponse, "the tus server no longer has the upload"), at: .create)
    }

    /// After a failure: where the server stands is asked with HEAD (or the upload is created,
    /// if it never was), after a backoff; past `maxFailures` the task fails with `error`.
    private mutating func retry(_ error: TaskError, at next: Step? = nil) -> Action {
        failures += 1
        guard failures < Self.maxFailures else {
            return .fail(TaskError(URLErrorCode(rawValue: error.code) ?? .unknown, "the tus upload failed \(failures) times; the last: \(error.message)"))
        }
        step = next ?? (state.uploadURL == nil ? .create : .locate)
        return .perform(step, delay: min(Self.maxBackoff, Self.firstBackoff * Double(1 << (failures - 1))))
    }

    private mutating func go(_ next: Step) -> Action {
        step = next
        return .perform(next, delay: 0)
    }

    private func serverError(_ method: String, _ status: Int) -> TaskError {
        TaskError(.badServerResponse, "the tus server answered \(method) with \(status)")
    }

    private static func offset(in headers: [String: String]) -> Int? {
        ResponseInfo.value(of: "Upload-Offset", in: headers).flatMap { Int($0.trimmed()) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// Failures worth another attempt: the connection broke, stalled or could not be made.
    /// Not: a cancel, a body file that is gone, a bad URL, TLS trust, the network policy.
    static func isTransient(_ error: TaskError) -> Bool {
        // The network policy refuses the same address every time.
        if error.isNetworkPolicyRefusal { return false }
        switch URLErrorCode(rawValue: error.code) {
        case .timedOut, .networkConnectionLost, .cannotConnectToHost, .notConnectedToInternet, .badServerResponse, .cannotParseResponse: return true
        default: return false
        }
    }
}
