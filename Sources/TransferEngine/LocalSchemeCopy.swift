internal import FoundationEssentials
internal import TransferModel

/// The body of a `data:` or `file:` URL's worker thread: decodes the data: URL (up to 1 MiB of
/// text), or opens the file with the same confinement checks (`FileURLSource`: realpath,
/// O_NOFOLLOW, the /proc/self/fd recheck) and reads it in 1 MiB chunks; delivers the bytes and
/// reports straight to the observer, so the engine thread only posts the start and the controls
/// (`LocalCopy`). The source and any partial file live and die on this thread.
enum LocalSchemeCopy {
    static let chunkSize = 1 << 20

    static func run(_ job: TransferJob, scheme: LocalScheme, control: LocalCopy, observer: any TransferObserver) {
        let taskId = job.taskId
        let delivery = LocalDelivery(job: job, control: control) { update in
            control.report { observer.transfer(taskId, update) }
        }
        var outcome: TransferOutcome?
        do throws(TaskError) {
            switch scheme {
            case .data: outcome = try deliverData(job, delivery)
            case .file: outcome = try deliverFile(job, delivery)
            }
        } catch {
            outcome = .failure(error)
        }
        control.report(last: true) {
            if let outcome { observer.transfer(taskId, .completed(outcome)) }
        }
    }

    private static func deliverData(_ job: TransferJob, _ delivery: LocalDelivery) throws(TaskError) -> TransferOutcome? {
        let decoded: DataURL
        do {
            decoded = try DataURL(parsing: job.request.url)
        } catch {
            throw TaskError(.badURL, error == .invalidBase64 ? "the data: URL's base64 data is invalid" : "the data: URL has no comma before its data")
        }
        let response = response(url: job.request.url, mimeType: decoded.mimeType, textEncodingName: decoded.textEncodingName,
                                 length: decoded.data.count, filename: "Unknown")
        var offset = 0
        return try delivery.run(response) {
            let chunk = decoded.data.dropFirst(offset).prefix(chunkSize)
            offset += chunk.count
            return Data(chunk)
        }
    }

    private static func deliverFile(_ job: TransferJob, _ delivery: LocalDelivery) throws(TaskError) -> TransferOutcome? {
        let source = try FileURLSource(url: job.request.url, roots: job.fileURLRoots)
        defer { source.close() }
        let name = source.path.split(separator: "/").last.map(String.init) ?? "Unknown"
        // URLSession guesses a file's type from its extension; the daemon does not guess.
        let response = response(url: job.request.url, mimeType: "application/octet-stream", textEncodingName: nil,
                                length: source.size, filename: name)
        return try delivery.run(response) { source.read(upTo: chunkSize) }
    }

    /// A URLResponse (not HTTP): status 0, no header fields, the type and length of the resource.
    private static func response(url: String, mimeType: String, textEncodingName: String?, length: Int, filename: String) -> ResponseInfo {
        var response = ResponseInfo(statusCode: 0, headers: [:], url: url)
        response.mimeType = mimeType
        response.textEncodingName = textEncodingName
        response.expectedContentLength = length
        response.suggestedFilename = filename
        return response
    }
}
