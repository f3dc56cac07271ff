internal import FoundationEssentials

extension EngineLoop {
    /// Runs a data: or file: task to its end on the engine thread, reporting the same updates
    /// in the same order as an HTTP transfer (connecting, response, received, completed), so the
    /// service treats it as any other: a data task's body is stored, a download's partial file
    /// is moved to its destination. Only GET without a body: these schemes are read-only.
    /// A file: URL's bytes are copied here in 1 MiB reads (page-cache speed; a very large
    /// file holds up other transfers' callbacks while it is copied).
    func runLocal(_ job: TransferJob) {
        let taskId = job.taskId
        observer.transfer(taskId, .connecting)
        do throws(TaskError) {
            guard job.request.method.uppercased() == "GET", job.body == nil, job.streamedBody == nil, job.bodyStream == nil else {
                throw TaskError(.unsupportedURL, "data: and file: URLs are read-only: only GET without a body is supported")
            }
            let outcome = switch LocalScheme(url: job.request.url) {
            case .data: try loadData(job)
            case .file: try loadFile(job)
            case nil: TransferOutcome.failure(TaskError(.unsupportedURL, "the URL scheme is not supported"))
            }
            observer.transfer(taskId, .completed(outcome))
        } catch {
            observer.transfer(taskId, .completed(.failure(error)))
        }
    }

    private func loadData(_ job: TransferJob) throws(TaskError) -> TransferOutcome {
        let decoded: DataURL
        do {
            decoded = try DataURL(parsing: job.request.url)
        } catch {
            throw TaskError(.badURL, error == .invalidBase64 ? "the data: URL's base64 data is invalid" : "the data: URL has no comma before its data")
        }
        let response = Self.localResponse(url: job.request.url, mimeType: decoded.mimeType,
                                          textEncodingName: decoded.textEncodingName, length: decoded.data.count, filename: "Unknown")
        var sent = false
        return try deliver(job, response: response) {
            defer { sent = true }
            return sent ? nil : decoded.data
        }
    }

    private func loadFile(_ job: TransferJob) throws(TaskError) -> TransferOutcome {
        let source = try FileURLSource(url: job.request.url, roots: job.fileURLRoots)
        defer { source.close() }
        let name = source.path.split(separator: "/").last.map(String.init) ?? "Unknown"
        // URLSession guesses a file's type from its extension; the daemon does not guess.
        let response = Self.localResponse(url: job.request.url, mimeType: "application/octet-stream",
                                          textEncodingName: nil, length: source.size, filename: name)
        var failed = false
        let result = try deliver(job, response: response) {
            guard let chunk = source.read(upTo: 1 << 20) else {
                failed = true
                return nil
            }
            return chunk
        }
        if failed { throw TaskError(.noPermissionsToReadFile, "the file could not be read") }
        return result
    }

    /// Reports the response, then each chunk `next` gives (until it gives nil or nothing) as received
    /// bytes, into memory for a data task or the partial file for a download.
    private func deliver(_ job: TransferJob, response: ResponseInfo, next: () -> Data?) throws(TaskError) -> TransferOutcome {
        let taskId = job.taskId
        observer.transfer(taskId, .response(response))
        let file = try job.download.map { target throws(TaskError) in try DownloadFile(target: target) }
        var body = Data()
        var total = 0
        while let chunk = next(), !chunk.isEmpty {
            total += chunk.count
            if let file {
                guard file.write(chunk.bytes) else {
                    file.discard()
                    throw TaskError(.cannotWriteToFile, "cannot write the download's partial file")
                }
            } else {
                guard total <= job.maxBodySize else { throw TaskError(.dataLengthExceedsMaximum, "the body exceeds \(job.maxBodySize) bytes") }
                body.append(chunk)
            }
            observer.transfer(taskId, .received(bytes: chunk.count, total: total, expected: response.expectedContentLength, bytesPerSecond: 0))
        }
        guard let file else { return .success(body: body, response: response, location: nil) }
        let location = try file.finish(suggestedFilename: response.suggestedFilename)
        return .success(body: Data(), response: response, location: location)
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
