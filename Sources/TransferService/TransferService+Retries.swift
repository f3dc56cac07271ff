internal import FoundationEssentials
internal import JSONModel
internal import TransferEngine
internal import TransferModel

/// Retries and waiting for connectivity (`RetryPolicy`), applied to each attempt's outcome before
/// it can complete the task. A retried or waiting task leaves the engine and is held
/// (`TransferService+Holds`) until its next attempt; a download carries its partial file over
/// and goes on with a ranged request.
extension TransferService {
    /// Called for every `.completed` engine update. Returns true when the outcome was taken (the
    /// task is held for another attempt, or failed after waiting too long); false leaves it to
    /// complete the task as it is.
    func retryIfTransient(_ s: inout ServiceState, task id: Int, after outcome: TransferOutcome, _ deliveries: inout Deliveries) -> Bool {
        // Only a running task's own failure: not a cancel, not a suspension that timed out. Tus
        // uploads retry inside the engine; a client-streamed body cannot be sent again.
        guard let entry = s.tasks[id], entry.task.state == .running, let session = s.sessions[entry.task.sessionId],
              entry.task.resumable == nil, entry.task.bodyStream == nil else { return false }
        let now = Date()
        let failure = AttemptFailure(outcome, of: entry.task, now: now)
        var waits = entry.connectivityTries ?? 0
        if case .unreachable = failure {} else {
            s.tasks[id]?.connectivityTries = nil  // it connected: a wait (if any) is over
            waits = 0
        }
        let decision = RetryPolicy(backoff: configuration.retryBackoff, connectivity: configuration.connectivityBackoff).decide(
            failure, session: session.kind, waitsForConnectivity: session.configuration.waitsForConnectivity,
            retries: entry.task.retryCount, waits: waits, now: now,
            deadline: entry.task.createdAt.addingTimeInterval(session.configuration.timeoutIntervalForResource))
        switch decision {
        case .finish:
            return false
        case .stopWaiting(var error):
            if case .interrupted(_, let state) = outcome {
                // As any interrupted download: the partial file stays, for resume data.
                error.resumeData = sealedResumeData(for: entry.task, at: state)
                s.tasks[id]?.task.resume = state
                s.tasks[id]?.task.progress.bytesReceived = state.offset
            }
            complete(&s, task: id, error: error, body: nil, &deliveries)
            return true
        case .retry(let delay):
            keepPartialDownload(&s, task: id, outcome)
            emit(&s, session: session.id, task: id, .willRetry, [
                "attempt": .integer(Int64(entry.task.retryCount + 2)),  // the first attempt is 1
                "delay": .number(delay),
                "statusCode": failure?.statusCode.map { .integer(Int64($0)) } ?? .null,
                "error": failure?.error.map(\.jsonValue) ?? .null,
            ], &deliveries)
            hold(&s, task: id, until: now.addingTimeInterval(delay), for: .holdForRetry, &deliveries)
            // The failure's URLError code, or the HTTP status that asked for the retry.
            let reason = failure?.error.map { String($0.code) } ?? failure?.statusCode.map { "http_\($0)" } ?? "unknown"
            metrics.retries.increment(reason)
            logRetry(entry.task, delay: delay, reason: reason, &deliveries)
            return true
        case .wait(let delay):
            keepPartialDownload(&s, task: id, outcome)
            if entry.connectivityTries == nil {
                // URLSession's taskIsWaitingForConnectivity: once per wait, not per try.
                emit(&s, session: session.id, task: id, .taskIsWaitingForConnectivity, [
                    "error": failure?.error.map(\.jsonValue) ?? .null,
                ], &deliveries)
            }
            s.tasks[id]?.connectivityTries = waits + 1
            hold(&s, task: id, until: now.addingTimeInterval(delay), for: .holdForConnectivity, &deliveries)
            return true
        }
    }

    /// A download tried again goes on from its partial file when the attempt left one it can
    /// continue (`interrupted`); a plain failure deleted it, so the next attempt starts at 0.
    private func keepPartialDownload(_ s: inout ServiceState, task id: Int, _ outcome: TransferOutcome) {
        guard s.tasks[id]?.task.kind == .download else { return }
        switch outcome {
        case .interrupted(_, let state):
            s.tasks[id]?.task.resume = state
            s.tasks[id]?.task.progress.bytesReceived = state.offset
        case .failure, .success, .destinationTaken:
            s.tasks[id]?.task.resume = nil
            s.tasks[id]?.task.progress.bytesReceived = 0
        }
    }
}
