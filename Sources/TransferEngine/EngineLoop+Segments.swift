internal import Curl
internal import FoundationEssentials
internal import TransferModel

/// The segmented downloads the engine runs and their workers' easy handles (`EngineLoop+Segments`).
final class SegmentTable {
    var downloads: [Int: SegmentedDownload] = [:]
    /// A worker's easy handle: its task and worker number.
    var workerHandles: [ObjectIdentifier: (taskId: Int, worker: Int)] = [:]
    /// Tasks whose first answer showed they can be segmented, started after `perform` returns
    /// (easy handles are not added from inside curl's callbacks).
    var offered: [Int] = []
}

/// Segmented downloads (issue 18 item 2): the task's transfer offers itself once its first
/// answer shows ranges can be trusted (`Transfer.offerSegments`); then the resource is split
/// (`SegmentPlan`), the partial file preallocated, and ranged workers are added on the
/// connections the scheduler grants (`SegmentConnections`: the engine asks for them and gives
/// them back; it never opens one it was not granted). Each worker's answer is checked
/// before a byte is written (`SegmentedDownload.received`); a source that answers wrongly is
/// dropped and its range goes back to the pool; with no source left the first connection's GET
/// reads the rest, or the download continues over one connection from its contiguous prefix.
extension EngineLoop {
    /// A download that may use several connections listens for its first answer.
    func listenForSegmentOffer(_ transfer: Transfer) {
        guard transfer.job.segmentCount > 1 else { return }
        transfer.onSegmentOffer = { [segmentTable] offered in segmentTable.offered.append(offered.job.taskId) }
    }

    func startOfferedSegments() {
        guard !segmentTable.offered.isEmpty else { return }
        let offered = segmentTable.offered
        segmentTable.offered.removeAll()
        for taskId in offered { startSegments(taskId) }
    }

    private func startSegments(_ taskId: Int) {
        guard let transfer = transfers[taskId], transfer.segmented == nil, transfer.failure == nil, let file = transfer.file,
              let total = transfer.expectedTotal, let state = transfer.resumeState(),
              let plan = plan(for: transfer, file: file, total: total) else { return }
        guard file.preallocate(total) else {
            transfer.failure = TaskError(.cannotWriteToFile, "no room on the disk for the download's \(total) bytes")
            return
        }
        let representation = ResumeState(offset: 0, etag: state.etag, lastModified: state.lastModified, expectedLength: total)
        let sources = [transfer.currentURL] + transfer.job.mirrors.filter { $0 != transfer.currentURL }
        let download = SegmentedDownload(primary: transfer, plan: plan, representation: representation, sources: sources,
                                         connections: transfer.job.segmentCount, origin: { RequestURL.origin(of: $0) ?? $0 })
        transfer.segmented = download
        segmentTable.downloads[taskId] = download
        transfer.throttle.shareOwnBuckets()
        spawnWorkers(download)
    }

    /// The task's receive buffer is sized for its limit shared by its connections, so one chunk
    /// of a worker is not a whole tenth of a second of the task's rate.
    static func share(of limit: BandwidthLimit?, _ download: SegmentedDownload) -> BandwidthLimit? {
        guard var limit, let rate = limit.downloadBytesPerSecond else { return limit }
        limit.downloadBytesPerSecond = max(1, rate / download.connections)
        return limit
    }

    /// The scheduler granted task `taskId` one more connection to `origin`. One that cannot be
    /// used (the task no longer segments, or has no part left to give) goes back at once.
    func grantSegmentConnection(_ taskId: Int, _ origin: String) {
        guard let download = segmentTable.downloads[taskId] else {
            // Still in the engine but over one connection: it wants no more.
            guard transfers[taskId] != nil else { return }  // gone: the scheduler freed its grants
            observer.transfer(taskId, .segmentConnections(SegmentConnections(wanted: 0, origins: [], returned: [origin])))
            return
        }
        download.granted[origin, default: 0] += 1
        spawnWorkers(download)
    }

    /// A new plan, or (a download resumed from a checkpoint or resume data that recorded its
    /// parts) the recorded one, each part going on from its own synced offset.
    private func plan(for transfer: Transfer, file: DownloadFile, total: Int) -> SegmentPlan? {
        guard transfer.base > 0, let resume = transfer.job.resume else {
            return SegmentPlan(total: total, count: transfer.job.segmentCount, written: file.written, firstOwner: 0)
        }
        guard let parts = resume.parts, resume.expectedLength == total else { return nil }
        return SegmentPlan(total: total, restoring: parts, resumedAt: transfer.base,
                           fileSize: FileSystem.size(of: file.target.partialPath) ?? 0, firstOwner: 0)
    }

    /// Adds workers while there is work, connections to spare and a granted connection (or
    /// the task's own, once its first GET ended) free at a source's host; then tells the
    /// scheduler what it wants and gives back what it cannot use.
    private func spawnWorkers(_ download: SegmentedDownload) {
        while let assignment = download.assign(mayUse: download.hasRoom) {
            if !startWorker(download, assignment.worker, source: assignment.source, range: assignment.range) {
                download.workerStartFailed = true
                break
            }
        }
        if let request = download.connectionsToReport() { observer.transfer(download.taskId, .segmentConnections(request)) }
    }

    private func startWorker(_ download: SegmentedDownload, _ worker: Int, source: Int, range: Range<Int>) -> Bool {
        var job = download.primary.job
        job.request.url = download.sources[source]
        job.request.headers["Range"] = "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
        // The file holds the identity representation: a coded range could not be written.
        job.request.headers["Accept-Encoding"] = "identity"
        job.download = nil
        job.resume = nil
        job.checkpoints = false
        job.checksum = nil
        job.segments = 1
        job.mirrors = []
        job.responseDisposition = nil
        job.conversionTarget = nil
        // A worker's redirects and challenges are the task's own, decided by worker 0 already.
        job.decisions = []
        // The task URL's user and password are for its own host, not a mirror's.
        if source != 0 { job.urlLogin = nil }
        job.bandwidthLimit = Self.share(of: job.bandwidthLimit, download)
        do {
            // Its updates are the task's only through worker 0 (`SegmentedDownload.take`).
            let transfer = try Transfer(job: job, governor: governor) { _ in }
            transfer.segmented = download
            transfer.segmentWorker = worker
            try sizeReceiveBuffer(transfer)
            // The task's limit is one bucket all its connections draw on: what a slow one
            // leaves, the others may take.
            transfer.throttle.share(&download.primary.throttle)
            try addToMulti(transfer)
            download.add(worker, transfer, source: source, range: range)
            segmentTable.workerHandles[ObjectIdentifier(transfer.handle)] = (download.taskId, worker)
            if download.primary.pausedAt != nil { pause(transfer) }
            return true
        } catch {
            download.abandon(worker)
            return false
        }
    }

    /// Ends the workers whose connection moved no byte for half the request's
    /// timeoutInterval (time waiting for bandwidth tokens aside): the rest of the part goes
    /// back to the pool and another connection takes it over, as a straggler's would be. Half,
    /// so the new one has the other half before the task itself counts as idle (`sweep`); a
    /// source that stalls is not dropped for it (a busy server may stall one connection).
    /// The first connection's GET too: its handle leaves the multi (the task keeps it, with
    /// its response, until it ends) and its part goes to the others.
    func retireStalledWorkers(now: Double) {
        guard !segmentTable.downloads.isEmpty else { return }
        for download in segmentTable.downloads.values where download.primary.pausedAt == nil {
            let limit = download.primary.job.request.timeoutInterval / 2
            var retired = false
            if download.primaryRunning {
                if download.primary.throttle.isThrottled { download.primaryActivity = now }
                if now - download.primaryActivity > limit {
                    multi.remove(download.primary.handle)
                    download.primaryEnded()
                    retired = true
                }
            }
            for (worker, state) in download.workers {
                let transfer = state.transfer
                if transfer.throttle.isThrottled { transfer.lastActivity = now }
                guard now - transfer.lastActivity > limit else { continue }
                removeWorkerHandle(download, worker)
                download.stop(worker: worker)
                retired = true
            }
            if retired { advance(download) }
        }
    }

    /// A finished easy handle of a segmented download (a worker's, or the task's own while it
    /// is segmented): true when it was one, handled here.
    func segmentHandleDone(_ easy: EasyHandle, _ code: CurlCode) -> Bool {
        let id = ObjectIdentifier(easy)
        if let (taskId, worker) = segmentTable.workerHandles.removeValue(forKey: id) {
            guard let download = segmentTable.downloads[taskId] else { return true }
            // The network policy's refusal and a proxy's are told apart as for any transfer.
            let failure = code.isOK ? nil : download.workers[worker]?.transfer.transportError(code)
            removeWorkerHandle(download, worker)
            download.ended(worker: worker, failure: failure)
            advance(download)
            return true
        }
        guard let taskId = taskIds[id], let transfer = transfers[taskId], let download = transfer.segmented else { return false }
        // Its part done (the write callback stopped it at the part's end) or failed: the rest
        // of its part, if any, goes back to the pool. The handle stays in the multi until the
        // task ends (`detach`).
        download.primaryEnded()
        advance(download)
        return true
    }

    /// After a connection ended: the download completes, fails, falls back, or takes more workers.
    private func advance(_ download: SegmentedDownload) {
        let taskId = download.taskId
        let primary = download.primary
        if primary.failure != nil {
            primary.reportProgress(now: Self.now(), force: true)
            return finish(taskId, primary.outcome(.ok))
        }
        if download.plan.isComplete {
            primary.file?.assembled(length: download.plan.total)
            primary.reportProgress(now: Self.now(), force: true)
            return finish(taskId, primary.outcome(.ok))
        }
        for (worker, state) in download.workers where download.dropped.contains(state.source) {
            removeWorkerHandle(download, worker)
            download.stop(worker: worker)
        }
        if download.usableSources.isEmpty {
            // A server that will not serve ranges after all, or mirrors that all differ.
            guard download.primaryRunning else { return continueOverOneConnection(download) }
            download.fallBackToFirstConnection()
            if let request = download.connectionsToReport() { observer.transfer(taskId, .segmentConnections(request)) }
            return
        }
        spawnWorkers(download)
    }

    /// No source can serve ranges any more and the first connection ended: the download goes
    /// on as a plain one from the bytes it holds from 0 without a gap (a ranged request with
    /// If-Range, checked by `RangedAnswer` as any resumed download is).
    private func continueOverOneConnection(_ download: SegmentedDownload) {
        let taskId = download.taskId
        guard detach(taskId) != nil else { return }  // its grants go back (`dropSegmentWorkers`)
        var job = download.primary.job
        job.segments = 1
        let prefix = download.plan.contiguous
        var state = download.representation
        state.offset = prefix
        job.resume = prefix > 0 ? state : nil
        apply(.start(job))
        observer.transfer(taskId, .resumed(offset: prefix, expectedTotal: download.plan.total))
    }

    private func removeWorkerHandle(_ download: SegmentedDownload, _ worker: Int) {
        guard let transfer = download.workers[worker]?.transfer else { return }
        segmentTable.workerHandles[ObjectIdentifier(transfer.handle)] = nil
        governor.forget(download.taskId, &transfer.throttle)
        multi.remove(transfer.handle)
    }

    /// The task leaves the engine (done, failed, cancelled, suspended too long): its workers go.
    func dropSegmentWorkers(_ taskId: Int) {
        guard let download = segmentTable.downloads.removeValue(forKey: taskId) else { return }
        let wanted = download.reported?.wanted ?? 0
        for worker in download.workers.keys {
            removeWorkerHandle(download, worker)
            download.stop(worker: worker)
        }
        // Its grants go back and it wants no more: the task may go on in the engine over one
        // connection or start again (a restart from zero), and one that ends frees the slots
        // a moment sooner.
        let request = download.returnAllGrants()
        if wanted > 0 || !request.returned.isEmpty || !request.dropped.isEmpty { observer.transfer(taskId, .segmentConnections(request)) }
    }

    func pauseSegmentWorkers(_ taskId: Int) {
        for transfer in segmentTable.downloads[taskId]?.workerTransfers ?? [] { pause(transfer) }
    }

    func resumeSegmentWorkers(_ taskId: Int) {
        for transfer in segmentTable.downloads[taskId]?.workerTransfers ?? [] { unpause(transfer) }
    }

    /// Workers waiting for bandwidth tokens (`releaseThrottled`).
    func throttledSegmentWorkers() -> [Transfer] {
        guard !segmentTable.downloads.isEmpty else { return [] }
        return segmentTable.downloads.values.flatMap(\.workerTransfers).filter { $0.throttle.isThrottled && $0.pausedAt == nil }
    }
}
