internal import FoundationEssentials

extension EngineLoop {
    /// Runs a data: or file: task, reporting the same updates in the same order as an HTTP
    /// transfer (connecting, response, received, completed), so the service treats it as any
    /// other. Only GET without a body: these schemes are read-only. A data: URL (a few KB at
    /// most) is answered here; a file: URL is copied on a worker thread of its own
    /// (`LocalFileCopy`), so a large file holds up no other transfer.
    func runLocal(_ job: TransferJob) {
        let taskId = job.taskId
        observer.transfer(taskId, .connecting)
        guard job.request.method.uppercased() == "GET", job.body == nil, job.streamedBody == nil, job.bodyStream == nil else {
            observer.transfer(taskId, .completed(.failure(TaskError(.unsupportedURL, "data: and file: URLs are read-only: only GET without a body is supported"))))
            return
        }
        switch LocalScheme(url: job.request.url) {
        case .data:
            let outcome: TransferOutcome?
            do throws(TaskError) {
                outcome = try loadData(job)
            } catch {
                outcome = .failure(error)
            }
            if let outcome { observer.transfer(taskId, .completed(outcome)) }
        case .file:
            let control = LocalCopy(paused: job.startPaused)
            localCopies[taskId] = control
            let observer = observer
            DedicatedThread.start { LocalFileCopy.run(job, control: control, observer: observer) }
        case nil:
            observer.transfer(taskId, .completed(.failure(TaskError(.unsupportedURL, "the URL scheme is not supported"))))
        }
    }

    /// Whether the task has a file copy still running (a new start of it waits for its end).
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

    private func loadData(_ job: TransferJob) throws(TaskError) -> TransferOutcome? {
        let decoded: DataURL
        do {
            decoded = try DataURL(parsing: job.request.url)
        } catch {
            throw TaskError(.badURL, error == .invalidBase64 ? "the data: URL's base64 data is invalid" : "the data: URL has no comma before its data")
        }
        let response = Self.localResponse(url: job.request.url, mimeType: decoded.mimeType,
                                          textEncodingName: decoded.textEncodingName, length: decoded.data.count, filename: "Unknown")
        var sent = false
        let delivery = LocalDelivery(job: job, control: nil) { [observer] update in observer.transfer(job.taskId, update) }
        return try delivery.run(response) {
            defer { sent = true }
            return sent ? Data() : decoded.data
        }
    }

    /// A URLResponse (not HTTP): status 0, no header fields, the type and length of the resource.
    static func localResponse(url: String, mimeType: String, textEncodingName: String?, length: Int, filename: String) -> ResponseInfo {
        var response = ResponseInfo(statusCode: 0, headers: [:], url: url)
        response.mimeType = mimeType
        response.textEncodingName = textEncodingName
        response.expectedContentLength = length
        response.suggestedFilename = filename
        return response
    }
}
