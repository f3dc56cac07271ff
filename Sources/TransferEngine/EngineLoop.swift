internal import Curl
internal import Dispatch
internal import Glibc
internal import Synchronization
internal import TransferModel

/// The engine thread's own state and loop: the multi handle and every running `Transfer`.
/// Not Sendable: it exists only on that thread (handed over once by `CurlEngine`).
package final class EngineLoop {
    let multi: MultiHandle
    let observer: any TransferObserver
    /// The running transfer of each task (for a tus upload: the step in flight).
    var transfers: [Int: Transfer] = [:]
    var taskIds: [ObjectIdentifier: Int] = [:]
    /// Tus uploads by task, also between steps (`EngineLoop+Tus`).
    var tusRuns: [Int: TusRun] = [:]
    /// file: URL copies running on their worker threads, by task (`EngineLoop+LocalSchemes`).
    var localCopies: [Int: LocalCopy] = [:]
    /// The daemon-wide rate limits and the line of transfers waiting for tokens.
    let governor = BandwidthGovernor()
    /// Sessions' own connection pools after a reset or flush.
    let connectionPools = ConnectionPools()
    /// When idle connection pools are next looked for (`retireIdlePools`).
    var nextPoolSweep = 0.0
    /// Stream tasks' connections (`EngineLoop+Streams`).
    let streams = StreamTable()
    /// Segmented downloads and their workers (`EngineLoop+Segments`).
    let segmentTable = SegmentTable()
    /// Connections made only to read a refused server's certificates, by handle: the task
    /// waiting for them (`EngineLoop+Decisions`).
    var trustProbes: [ObjectIdentifier: (taskId: Int, probe: EasyHandle)] = [:]
    /// The commands of the current turn, taken from the inbox.
    private var turnCommands: [EngineCommand] = []

    init(multi: MultiHandle, observer: any TransferObserver) {
        self.multi = multi
        self.observer = observer
    }

    func run(inbox: borrowing Mutex<EngineInbox>) {
        while true {
            // The inbox's array and this one trade places, so neither is copied or allocated
            // again each turn (a copy, then emptying the shared buffer, allocated a new one).
            let stopping = inbox.withLock { inbox in
                swap(&inbox.commands, &turnCommands)
                return inbox.stopping
            }
            // The turn's updates go to the service together, with one wake-up.
            observer.holdUpdates()
            for command in turnCommands { apply(command) }
            turnCommands.removeAll(keepingCapacity: true)
            if stopping {
                observer.releaseUpdates()
                break
            }
            forgetFinishedCopies()
            multi.perform()
            startOfferedSegments()
            for (easy, code) in multi.completions() {
                if trustProbeDone(easy, code) { continue }
                if streamHandleDone(easy, code) { continue }
                if segmentHandleDone(easy, code) { continue }
                guard let taskId = taskIds[ObjectIdentifier(easy)], let transfer = transfers[taskId] else { continue }
                transfer.remoteTransferEnded(code)
                if transfer.needsRestartFromZero {
                    restartFromZero(taskId, transfer)
                    continue
                }
                if let next = transfer.retryAnsweringChallenge(after: code) {
                    answerChallenge(taskId, transfer, with: next)
                    continue
                }
                if transfer.decidesServerTrust(after: code) {
                    probeServerTrust(taskId, transfer)
                    continue
                }
                if code.isOK, transfer.awaited != nil {
                    park(taskId, transfer)  // the client decides how it goes on (`EngineLoop+Decisions`)
                    continue
                }
                transfer.reportProgress(now: Self.now(), force: true)
                switch transfer.ending(code) {
                case .outcome(let outcome): stepEnded(taskId, outcome)
                case .place(let placement): finish(taskId, placement)
                }
            }
            let pending = sweep(now: Self.now())
            retireIdlePools(now: Self.now())
            // While coalesced counts wait to be reported, wake soon enough to report them; a tus
            // upload waiting out a backoff wakes the loop when it is over; a throttled transfer
            // when its tokens are back.
            var timeout = pending ? Int(Transfer.reportInterval * 1000) : 1000
            if let wait = releaseThrottled(now: Self.now()) { timeout = min(timeout, max(1, Int((wait * 1000).rounded(.up)))) }
            if let wait = startDueTusSteps(now: Self.now()) { timeout = min(timeout, max(1, Int((wait * 1000).rounded(.up)))) }
            pumpStreams()
            if let wait = streamTimeout(now: Self.now()) { timeout = min(timeout, max(1, Int((wait * 1000).rounded(.up)))) }
            observer.releaseUpdates()
            streamsReady(multi.poll(timeoutMilliseconds: timeout, watching: streamWatches()))
        }
        for transfer in transfers.values { multi.remove(transfer.handle) }
        for copy in localCopies.values { copy.abandon() }
        localCopies.removeAll()
        tusRuns.removeAll()
        transfers.removeAll()
        taskIds.removeAll()
        connectionPools.closeAll()
        multi.close()
    }

    func apply(_ command: EngineCommand) {
        switch command {
        case .start(let job):
            guard transfers[job.taskId] == nil, tusRuns[job.taskId] == nil, !copiesLocally(job.taskId) else { return }
            let taskId = job.taskId
            if let state = job.tus {
                startTus(job, state)
                return
            }
            if LocalScheme(url: job.request.url) != nil {
                runLocal(job)  // data: and file: are answered by the daemon, not libcurl
                return
            }
            do {
                let transfer = try Transfer(job: job, governor: governor) { [observer] update in observer.transfer(taskId, update) }
                try sizeReceiveBuffer(transfer)
                listenForSegmentOffer(transfer)
                try addToMulti(transfer)
                transfers[taskId] = transfer
                taskIds[ObjectIdentifier(transfer.handle)] = taskId
                observer.transfer(taskId, .connecting)
                if job.startPaused { pause(transfer) }
            } catch {
                observer.transfer(taskId, .completed(.failure(URLErrorMapping.setupError(error, "the transfer could not be started"))))
            }
        case .pause(let taskId):
            tusRuns[taskId]?.paused = true
            localCopies[taskId]?.pause()
            if let transfer = transfers[taskId] { pause(transfer) }
            pauseSegmentWorkers(taskId)
        case .resume(let taskId):
            tusRuns[taskId]?.paused = false
            localCopies[taskId]?.resume()
            resumeSegmentWorkers(taskId)
            if let transfer = transfers[taskId] { unpause(transfer) }
        case .preempt(let taskId):
            guard let transfer = transfers[taskId], transfer.isDownload, tusRuns[taskId] == nil else { return }
            letConnectionGo(taskId, transfer)
        case .bodyAvailable(let taskId, let available, let ended):
            guard let transfer = transfers[taskId] else { return }
            transfer.bodyGrew(available: available, ended: ended)
            guard transfer.waitsForBody else { return }
            transfer.waitsForBody = false
            // A client-suspended transfer stays paused; resuming it unpauses.
            if transfer.pausedAt == nil { try? transfer.handle.pause(false) }
        case .setPriority(let taskId, let priority):
            transfers[taskId]?.setPriority(priority)
        case .setBandwidthLimit(let taskId, let limit):
            // A tus upload's next step starts with the new limit too.
            tusRuns[taskId]?.job.bandwidthLimit = limit
            // A segmented download's connections share its transfer's bucket.
            transfers[taskId]?.setBandwidthLimit(limit)
        case .setLimits(let limits):
            governor.setLimits(limits, now: Self.now())
        case .renewConnections(let pool):
            connectionPools.renew(pool)
        case .forgetConnections(let pool):
            connectionPools.forget(pool)
        case .openStream(let job):
            openStream(job)
        case .stream(let command):
            applyStream(command)
        case .grantConnection(let taskId, let origin):
            grantSegmentConnection(taskId, origin)
        case .decide(let taskId, let answer):
            decide(taskId, answer)
        case .cancel(let taskId, let keepPartial):
            if streams.connections[taskId] != nil { return endStream(taskId, TaskError(.cancelled, "cancelled")) }
            // A data: or file: copy has no resume data (no validator): it ends cancelled, its file deleted.
            localCopies[taskId]?.cancel()
            if tusRuns[taskId] != nil, transfers[taskId] == nil {
                // Between two steps of a tus upload: nothing to stop but the run.
                tusRuns[taskId] = nil
                observer.transfer(taskId, .completed(.failure(TaskError(.cancelled, "cancelled"))))
                return
            }
            guard let transfer = transfers[taskId] else { return }
            let error = TaskError(.cancelled, "cancelled")
            transfer.reportProgress(now: Self.now(), force: true)
            finish(taskId, keepPartial ? transfer.interrupted(error) : .failure(error))
        }
    }

    /// A resumed download whose range the server could not serve (416) and whose partial file
    /// is not whole: the same job again, without the partial file, from byte 0.
    private func restartFromZero(_ taskId: Int, _ transfer: Transfer) {
        transfers[taskId] = nil
        taskIds[ObjectIdentifier(transfer.handle)] = nil
        governor.forget(taskId, &transfer.throttle)
        reportMetrics(taskId, transfer)
        multi.remove(transfer.handle)
        var job = transfer.job
        job.resume = nil
        apply(.start(job))
        observer.transfer(taskId, .resumed(offset: 0, expectedTotal: nil))
    }

    func pause(_ transfer: Transfer) {
        guard transfer.pausedAt == nil else { return }
        transfer.pausedAt = Self.now()
        // Suspended, it gives up its place in line; resuming redelivers its chunk, which queues again.
        governor.forget(transfer.job.taskId, &transfer.throttle)
        try? transfer.handle.pause(true)
    }

    /// Undoes `pause`: the transfer moves again, its idle clock and speed starting afresh.
    func unpause(_ transfer: Transfer) {
        guard transfer.pausedAt != nil else { return }
        transfer.pausedAt = nil
        transfer.lastActivity = Self.now()
        transfer.resetSpeed()
        try? transfer.handle.pause(false)
    }

    /// Reports coalesced progress and times out transfers suspended for longer than their idle
    /// timeout (URLSession's rule). Returns whether progress is still waiting to be reported.
    private func sweep(now: Double) -> Bool {
        var pending = false
        retireStalledWorkers(now: now)
        for (taskId, transfer) in transfers {
            // Waiting for the client is not being idle: the service bounds a decision's wait.
            if transfer.awaited != nil { continue }
            if let pausedAt = transfer.pausedAt, now - pausedAt > transfer.job.request.timeoutInterval {
                if transfer.isDownload {
                    letConnectionGo(taskId, transfer)
                } else {
                    finish(taskId, transfer.interrupted(TaskError(.timedOut, "the task was suspended for longer than its timeoutInterval")))
                }
                continue
            }
            // Waiting for tokens is not being idle.
            if transfer.throttle.isThrottled { transfer.lastActivity = now }
            if transfer.pausedAt == nil, now - transfer.lastActivity > transfer.job.request.timeoutInterval {
                stepEnded(taskId, transfer.interrupted(TaskError(.timedOut, "no data moved for longer than the request's timeoutInterval")))
                continue
            }
            if transfer.reportProgress(now: now) { pending = true }
            if transfer.job.checkpoints, now - transfer.lastCheckpoint >= Self.checkpointInterval {
                transfer.lastCheckpoint = now
                checkpoint(taskId, transfer)
            }
        }
        return pending
    }

    /// How often a running download's partial file is synced and its offset recorded: a crash
    /// costs at most about this much of a download (plus the store's own 1 s checkpoint).
    static let checkpointInterval = 1.0
    /// fdatasync waits on the disk: it runs here, never on the engine thread.
    private let syncQueue = DispatchQueue(label: "transferd.engine.checkpoint")

    /// Syncs the partial file off the engine thread, then reports the offset, so the recorded
    /// offset never runs ahead of the bytes on disk.
    private func checkpoint(_ taskId: Int, _ transfer: Transfer) {
        guard let (state, descriptor) = transfer.checkpointCandidate() else { return }
        syncQueue.async { [observer] in
            let synced = fdatasync(descriptor) == 0
            close(descriptor)
            if synced { observer.transfer(taskId, .checkpoint(state)) }
        }
    }

    /// A download suspended for longer than its idle timeout lets its connection go instead of
    /// failing (unlike a data task, as the issue asks of URLSession's model): the partial file
    /// stays, and resuming continues it with a ranged request.
    private func letConnectionGo(_ taskId: Int, _ transfer: Transfer) {
        _ = detach(taskId)
        transfer.reportProgress(now: Self.now(), force: true)
        let state = transfer.resumeState()
        // Without a validator a later range could splice two versions: start over instead.
        if state == nil { transfer.discardPartialFile() }
        observer.transfer(taskId, .detached(state))
    }

    /// Ends the task's transfer and the task with `outcome` (a tus upload's run with it).
    func finish(_ taskId: Int, _ outcome: TransferOutcome) {
        guard let transfer = detach(taskId) else { return }
        tusRuns[taskId] = nil
        if case .failure = outcome { transfer.discardPartialFile() }
        observer.transfer(taskId, .completed(outcome))
    }

    /// A download libcurl finished: its file is verified and placed off this thread
    /// (`FilePlacement`), and the completion is reported from there.
    func finish(_ taskId: Int, _ placement: FilePlacement) {
        guard detach(taskId) != nil else { return }
        tusRuns[taskId] = nil
        observer.place(taskId, placement)
    }

    /// A transfer ended by itself (done, failed, idle too long): a tus upload decides its next
    /// step; any other task is finished.
    func stepEnded(_ taskId: Int, _ outcome: TransferOutcome) {
        guard let run = tusRuns[taskId] else { return finish(taskId, outcome) }
        _ = detach(taskId)
        advance(taskId, run, after: outcome)
    }

    /// Takes the task's transfer out of the multi handle; reports only the metrics of the
    /// requests it made (before whatever the caller reports next, such as the completion).
    func detach(_ taskId: Int) -> Transfer? {
        guard let transfer = transfers.removeValue(forKey: taskId) else { return nil }
        dropSegmentWorkers(taskId)
        taskIds[ObjectIdentifier(transfer.handle)] = nil
        governor.forget(taskId, &transfer.throttle)
        reportMetrics(taskId, transfer)
        multi.remove(transfer.handle)
        if let pool = transfer.job.connectionPool { connectionPools.used(pool, now: Self.now()) }
        return transfer
    }

    /// Reports the transactions of a transfer that ends (read before its handle leaves the multi).
    private func reportMetrics(_ taskId: Int, _ transfer: Transfer) {
        let transactions = transfer.finishMetrics()
        if !transactions.isEmpty { observer.transfer(taskId, .transactions(transactions)) }
    }

    /// Monotonic seconds (wall-clock changes must not distort speeds or timeouts).
    package static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
