internal import FoundationEssentials
internal import TransferModel
internal import TransferEngine

/// What ended an attempt, as far as trying again goes: nothing worth retrying (nil), a host that
/// could not be reached, or a transient failure after reaching it.
enum AttemptFailure: Equatable {
    /// No connection was made: DNS failed, the connection was refused, or nothing answered
    /// before the timeout. The network (or the host) may come back.
    case unreachable(TaskError)
    /// Reached the host, then a failure that may pass: the connection was lost or reset, no
    /// byte came for timeoutInterval, or the server answered 408, 429 or 5xx (`statusCode`,
    /// with its Retry-After in seconds if it sent one).
    case transient(error: TaskError?, statusCode: Int?, retryAfter: Double?)

    /// HTTP statuses that say "not now" rather than "no" (RFC 9110 15.5.9, 15.6; RFC 6585 4).
    static func isTransient(status: Int) -> Bool { status == 408 || status == 429 || (500...599).contains(status) }

    /// Codes libcurl reports only when it could not connect.
    private static let connectCodes: Set<Int> = [
        URLErrorCode.cannotConnectToHost.rawValue, URLErrorCode.cannotFindHost.rawValue,
        URLErrorCode.dnsLookupFailed.rawValue, URLErrorCode.notConnectedToInternet.rawValue,
    ]

    /// Classifies how `task`'s attempt ended. `task` is the record before the outcome is applied:
    /// its `response` is this attempt's (the service clears it when an attempt starts).
    init?(_ outcome: TransferOutcome, of task: TransferTask, now: Date) {
        switch outcome {
        case .success(_, let response, let location, _):
            // A data or upload task's error status is a response; a download's is a failure.
            guard location == nil, Self.isTransient(status: response.statusCode) else { return nil }
            self = .transient(error: nil, statusCode: response.statusCode, retryAfter: Self.retryAfter(response, now: now))
        case .destinationTaken:
            return nil  // the download succeeded; trying again would find the same file there
        case .failure(let error), .interrupted(let error, _):
            // The network policy refuses the same address every time: no retry, no wait.
            if error.isNetworkPolicyRefusal { return nil }
            if task.kind == .download, let response = task.response, response.statusCode >= 400 {
                // The status failed the download (URLErrorMapping.downloadError): judge the status.
                guard Self.isTransient(status: response.statusCode) else { return nil }
                self = .transient(error: error, statusCode: response.statusCode, retryAfter: Self.retryAfter(response, now: now))
            } else if Self.connectCodes.contains(error.code) {
                self = .unreachable(error)
            } else if error.code == URLErrorCode.timedOut.rawValue {
                // Timed out with no answer and nothing sent: the connection never came up (as
                // far as a client can tell; a host that accepts and then says nothing looks the same).
                self = task.response == nil && task.progress.bytesSent == 0
                    ? .unreachable(error) : .transient(error: error, statusCode: nil, retryAfter: nil)
            } else if error.code == URLErrorCode.networkConnectionLost.rawValue {
                self = .transient(error: error, statusCode: nil, retryAfter: nil)
            } else {
                return nil
            }
        }
    }

    private static func retryAfter(_ response: ResponseInfo, now: Date) -> Double? {
        ResponseInfo.value(of: "Retry-After", in: response.headers).flatMap { RetryAfter.seconds($0, now: now) }
    }

    /// The error this attempt ended with, if any (a status alone has none).
    var error: TaskError? {
        switch self {
        case .unreachable(let error): return error
        case .transient(let error, _, _): return error
        }
    }

    var statusCode: Int? {
        if case .transient(_, let status, _) = self { return status }
        return nil
    }
}
