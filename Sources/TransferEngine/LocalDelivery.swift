internal import FoundationEssentials
internal import TransferModel

/// Delivers a data: or file: resource as an HTTP transfer reports one: the response, the task's
/// response disposition, then coalesced received bytes into memory (data task) or the partial
/// file (download), and the outcome. Runs on the worker thread that reads the source
/// (`LocalSchemeCopy`); between chunks it obeys `control` (suspend, resume, cancel).
struct LocalDelivery {
    let job: TransferJob
    let control: LocalCopy
    let report: (TransferUpdate) -> Void

    /// The outcome, or nil when the delivery stopped without one (abandoned, or a download that
    /// let go after a long suspension and reported `detached`).
    func run(_ response: ResponseInfo, next: () -> Data?) throws(TaskError) -> TransferOutcome? {
        report(.response(response))
        var target = job.download
        switch job.responseDisposition?.action(statusCode: response.statusCode, mimeType: response.mimeType, expectedLength: response.expectedContentLength) ?? .allow {
        case .allow:
            break
        case .cancel:
            throw ResponseDisposition.cancelled
        case .becomeDownload:
            if target == nil, let conversion = job.conversionTarget {
                target = conversion
                report(.becameDownload)
            }
        }
        let file = try target.map { target throws(TaskError) in try DownloadFile(target: target) }
        var body = Data()
        var total = 0
        var unreported = 0
        var lastReport = 0.0
        var speed = SpeedMeter()
        let reportProgress = { (force: Bool) in
            let now = EngineLoop.now()
            guard unreported > 0, force || now - lastReport >= Transfer.reportInterval else { return }
            speed.record(total: total, at: now)
            report(.received(bytes: unreported, total: total, expected: response.expectedContentLength, bytesPerSecond: speed.bytesPerSecond))
            unreported = 0
            lastReport = now
        }
        while true {
            switch control.nextStep(suspendTimeout: job.request.timeoutInterval) {
            case .go:
                break
            case .cancelled:
                reportProgress(true)
                file?.discard()
                throw TaskError(.cancelled, "cancelled")
            case .abandoned:
                file?.discard()
                return nil
            case .suspendedTooLong:
                reportProgress(true)
                guard let file else { throw TaskError(.timedOut, "the task was suspended for longer than its timeoutInterval") }
                // As a long-suspended HTTP download: it lets go and starts again when resumed
                // (a local file has no validator to resume from, so from zero).
                file.discard()
                report(.detached(nil))
                return nil
            }
            guard let chunk = next() else {
                file?.discard()
                throw TaskError(.noPermissionsToReadFile, "the file could not be read")
            }
            if chunk.isEmpty { break }
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
            unreported += chunk.count
            reportProgress(false)
        }
        reportProgress(true)
        guard let file else { return .verifiedBody(body, response: response, method: job.request.method, checksum: job.checksum) }
        return try .finished(file, response: response)
    }
}
