/// The body of a `file:` URL's worker thread: opens the file with the same confinement checks
/// (`FileURLSource`: realpath, O_NOFOLLOW, the /proc/self/fd recheck), delivers it in 1 MiB
/// reads and reports straight to the observer, so the engine thread only posts the start and
/// the controls (`LocalCopy`). The source and any partial file live and die on this thread.
enum LocalFileCopy {
    static let chunkSize = 1 << 20

    static func run(_ job: TransferJob, control: LocalCopy, observer: any TransferObserver) {
        let taskId = job.taskId
        let delivery = LocalDelivery(job: job, control: control) { update in
            control.report { observer.transfer(taskId, update) }
        }
        var outcome: TransferOutcome?
        do throws(TaskError) {
            let source = try FileURLSource(url: job.request.url, roots: job.fileURLRoots)
            defer { source.close() }
            let name = source.path.split(separator: "/").last.map(String.init) ?? "Unknown"
            // URLSession guesses a file's type from its extension; the daemon does not guess.
            let response = EngineLoop.localResponse(url: job.request.url, mimeType: "application/octet-stream",
                                                    textEncodingName: nil, length: source.size, filename: name)
            outcome = try delivery.run(response) { source.read(upTo: chunkSize) }
        } catch {
            outcome = .failure(error)
        }
        control.report(last: true) {
            if let outcome { observer.transfer(taskId, .completed(outcome)) }
        }
    }
}
