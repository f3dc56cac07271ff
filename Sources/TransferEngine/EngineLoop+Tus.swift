internal import FoundationEssentials
internal import Curl
internal import TransferModel

/// Driving tus uploads: each step (POST, HEAD, PATCH) is a `Transfer` of its own on the multi
/// handle; when one ends, the task's `TusUpload` says what comes next. Engine thread only, never
/// blocking: a backoff is a deadline the loop's poll timeout honours, not a sleep.
extension EngineLoop {
    func startTus(_ job: TransferJob, _ state: ResumableUpload) {
        let run = TusRun(job: job, state: state, now: Self.now())
        tusRuns[job.taskId] = run
        observer.transfer(job.taskId, .connecting)
        if job.startPaused { run.paused = true }
        startStep(job.taskId, run)
    }

    /// Starts the step the upload is at, unless the client suspended the task (then it starts
    /// when resumed, from `startDueTusSteps`).
    private func startStep(_ taskId: Int, _ run: TusRun) {
        let now = Self.now()
        run.nextStepAt = nil
        guard !run.paused else {
            run.nextStepAt = now
            return
        }
        let step = run.upload.step
        guard let job = run.job(for: step, now: now) else {
            return end(taskId, .failure(TaskError(.timedOut, "the tus upload did not finish within the session's timeoutIntervalForResource")))
        }
        // didSendBodyData counts the bytes the server has: a PATCH from `base` adds to it.
        let base: Int
        if case .send(let from) = step { base = from } else { base = 0 }
        let length = run.upload.length
        do {
            let transfer = try Transfer(job: job, governor: governor) { [observer] update in
                // Only byte counts go out as they happen; responses are the run's to judge.
                if case .sent(let bytes, let total, _) = update {
                    observer.transfer(taskId, .sent(bytes: bytes, total: base + total, expected: length))
                }
            }
            try addToMulti(transfer)
            transfers[taskId] = transfer
            taskIds[ObjectIdentifier(transfer.handle)] = taskId
        } catch {
            end(taskId, .failure(URLErrorMapping.setupError(error, "the tus upload step could not be started")))
        }
    }

    /// Feeds a finished step to the upload and acts on its answer.
    func advance(_ taskId: Int, _ run: TusRun, after outcome: TransferOutcome) {
        let result: TusUpload.StepResult
        switch outcome {
        case .success(let body, let response, _, _):
            run.lastResponse = (response, body)
            result = .answered(status: response.statusCode, headers: response.headers)
        case .failure(let error), .interrupted(let error, _), .destinationTaken(let error, _, _, _):
            result = .failed(error)
        }
        let before = run.upload.state
        let previous = run.upload.step
        let action = run.upload.next(after: result)
        if run.upload.state != before { observer.transfer(taskId, .uploadState(run.upload.state)) }
        switch action {
        case .perform(let step, let delay):
            if case .send(let offset) = step, previous == .locate, let url = run.upload.state.uploadURL {
                observer.transfer(taskId, .uploadResumed(offset: offset, expectedTotal: run.upload.length, uploadURL: url))
            }
            if delay > 0 {
                if case .failed(let error) = result {
                    observer.transfer(taskId, .uploadRetrying(attempt: run.upload.failures, error: error))
                } else {
                    observer.transfer(taskId, .uploadRetrying(attempt: run.upload.failures, error: TaskError(.badServerResponse, "the tus server answered \(run.lastResponse?.0.statusCode ?? 0)")))
                }
                run.nextStepAt = Self.now() + delay
            } else {
                startStep(taskId, run)
            }
        case .complete:
            guard let (response, body) = run.lastResponse else {
                return end(taskId, .failure(TaskError(.badServerResponse, "the tus upload ended without a response")))
            }
            observer.transfer(taskId, .response(response))
            end(taskId, .success(body: body, response: response, location: nil))
        case .fail(let error):
            end(taskId, .failure(error))
        }
    }

    /// Starts the steps whose backoff is over (and those a resume released). Returns the seconds
    /// until the next one is due, if any waits.
    func startDueTusSteps(now: Double) -> Double? {
        var next: Double?
        for (taskId, run) in tusRuns where transfers[taskId] == nil && !run.paused {
            guard let at = run.nextStepAt else { continue }
            if at <= now {
                startStep(taskId, run)
            } else {
                next = min(next ?? .infinity, at - now)
            }
        }
        return next
    }

    /// Ends a tus upload that has no step in flight.
    private func end(_ taskId: Int, _ outcome: TransferOutcome) {
        tusRuns[taskId] = nil
        observer.transfer(taskId, .completed(outcome))
    }
}
