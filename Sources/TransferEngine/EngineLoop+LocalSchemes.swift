internal import FoundationEssentials
internal import TransferModel

extension EngineLoop {
    /// Runs a data: or file: task, reporting the same updates in the same order as an HTTP
    /// transfer (connecting, response, received, completed), so the service treats it as any
    /// other. Only GET without a body: these schemes are read-only. Both are delivered on a
    /// worker thread of their own (`LocalSchemeCopy`), so neither decoding a long data: URL nor
    /// reading a large file holds up another transfer.
    func runLocal(_ job: TransferJob) {
        let taskId = job.taskId
        observer.transfer(taskId, .connecting)
        guard job.request.method.uppercased() == "GET", job.body == nil, job.streamedBody == nil, job.bodyStream == nil else {
            observer.transfer(taskId, .completed(.failure(TaskError(.unsupportedURL, "data: and file: URLs are read-only: only GET without a body is supported"))))
            return
        }
        guard let scheme = LocalScheme(url: job.request.url) else {
            observer.transfer(taskId, .completed(.failure(TaskError(.unsupportedURL, "the URL scheme is not supported"))))
            return
        }
        let control = LocalCopy(paused: job.startPaused)
        localCopies[taskId] = control
        let observer = observer
        DedicatedThread.start { LocalSchemeCopy.run(job, scheme: scheme, control: control, observer: observer) }
    }

    /// Whether the task has a data: or file: copy still running (a new start of it waits for its end).
    func copiesLocally(_ taskId: Int) -> Bool {
        guard let control = localCopies[taskId] else { return false }
        if control.isFinished { localCopies[taskId] = nil }
        return !control.isFinished
    }

    /// Drops the controls of copies that ended (called once per loop turn).
    func forgetFinishedCopies() {
        guard !localCopies.isEmpty else { return }
        localCopies = localCopies.filter { !$0.value.isFinished }
    }
}
