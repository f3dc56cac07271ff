internal import Dispatch
internal import Glibc
internal import Synchronization
public import FoundationEssentials
internal import JSONModel
public import TransferModel
internal import TransferEngine
internal import TransferStore

extension TransferService {
    public func task(_ id: Int, owner: String?) throws -> TransferTask {
        let (task, held) = try visibleRecord(id, owner: owner)
        if held != nil, task.state == .completed { store.flush() }  // report a completion only once it is durable
        return task
    }

    /// GET /v1/tasks/{tid}: as `task`, with a stored one's JSON served as it is (not decoded).
    public func servedTask(_ id: Int, owner: String?) throws -> ServedTask {
        let held = try state.withLock { s throws -> TransferTask? in
            s.tasks.contains(id) ? try visibleTask(s, id, owner).task : nil
        }
        if let held {
            if held.state == .completed { store.flush() }  // report a completion only once it is durable
            return .held(held)
        }
        guard let stored = try store.storedTaskJSON(id: id), stored.state == .completed, stored.isVisible(to: owner),
              state.withLock({ storedTaskIsVisible($0, id, session: stored.sessionId, owner: owner) }) else {
            // Not stored, or it was held again a moment ago: the general path decides.
            return .held(try task(id, owner: owner))
        }
        return .stored(stored)
    }

    func visibleTask(_ s: ServiceState, _ id: Int, _ owner: String?) throws -> TaskEntry {
        guard let entry = s.tasks[id], entry.task.isVisible(to: owner),
              s.sessions[entry.task.sessionId]?.isVisible(to: owner) == true else {
            throw ServiceError.notFound("no task \(id)")
        }
        return entry
    }

    /// A page of a session's tasks in id order, optionally of one state: the ones held in
    /// memory merged with the completed ones that left it for the store (read after the held
    /// ones, so a task that leaves in between is in one of the two; held wins where in both).
    public func listTasks(in sessionId: String, state filter: TaskState?, owner: String?, limit: Int, cursor: String?) throws -> (items: [ServedTask], next: String?) {
        var after = 0
        if let cursor {
            guard let value = Int(cursor), value >= 0 else { throw ServiceError.invalidQuery("unknown cursor") }
            after = value
        }
        try learnSession(sessionId)
        let (held, recorded) = try state.withLock { s throws -> ([TransferTask], Bool) in
            _ = try visibleSession(s, sessionId, owner)
            var items: [TransferTask] = []
            let ids = s.tasksBySession[sessionId] ?? []
            for taskId in ids[ids.ascendingIndex(after: after)...] {
                guard let task = s.tasks[taskId]?.task, task.isVisible(to: owner), filter == nil || task.state == filter else { continue }
                items.append(task)
                if items.count > limit { break }
            }
            return (items, isRecorded(s, session: sessionId))
        }
        var items = held.map(ServedTask.held)
        // In a cluster the store has every state: queued tasks and other nodes' are only there.
        let coordinator = store.coordinator
        if recorded, filter == nil || filter == .completed || coordinator != nil {
            let heldIds = Set(held.map(\.id))
            var stored: [ServedTask] = []
            // Read on until the store is exhausted or more than a page is known up to the last id
            // read (rows another tenant owns in the shared session are skipped, not counted).
            var readThrough = after
            var exhausted = false
            while !exhausted {
                let rows = try coordinator?.tasks(session: sessionId, after: readThrough, limit: limit + 1)
                    ?? store.completedTasks(session: sessionId, after: readThrough, limit: limit + 1)
                stored += rows.filter { row in
                    !heldIds.contains(row.id) && row.isVisible(to: owner) && (filter == nil || row.state == filter)
                }.map(ServedTask.stored)
                exhausted = rows.count <= limit
                readThrough = rows.last?.id ?? readThrough
                if stored.count + held.count(where: { $0.id <= readThrough }) > limit { break }
            }
            items = (items + stored).sorted { $0.id < $1.id }
            if !exhausted { items.removeAll { $0.id > readThrough } }
        }
        let page = (items: Array(items.prefix(limit)), next: items.count > limit ? items[limit - 1].id.description : nil)
        if page.items.contains(where: \.isHeldCompletion) { store.flush() }  // completions once durable
        return page
    }

    /// PATCH: priority re-orders a queued task at once; description is replaced.
    public func update(task id: Int, _ update: TaskUpdate, owner: String?) throws -> TransferTask {
        try settled { try carryOut(.update(update), task: id, owner: owner, forwarding: true) }
    }

    /// A command a client gave on task `id`. In a cluster, one on a task another node runs is
    /// passed to that node and throws `CommandForwarded`, whose `answer` gives the result later:
    /// the HTTP routes answer then, holding no thread meanwhile.
    public func command(_ command: ClusterCommand, task id: Int, owner: String?) throws -> TransferTask {
        try carryOut(command, task: id, owner: owner, forwarding: true)
    }

    /// The result of a command, waited for on this thread when it was passed to another node
    /// (for callers other than the routes, which answer later instead).
    func settled(_ body: () throws -> TransferTask) throws -> TransferTask {
        do {
            return try body()
        } catch let forwarded as CommandForwarded {
            let result = Mutex<Result<TransferTask, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            forwarded.answer { answer in
                result.withLock { $0 = answer }
                done.signal()
            }
            done.wait()
            return try result.withLock { $0! }.get()
        }
    }

    /// Runs a command a client (or, in a cluster, another node for its client) gave on task
    /// `id`. In a cluster, a task no node holds is brought here first; one another node holds is
    /// passed to that node (`forwarding`; a node that got it passed does not pass it on).
    func carryOut(_ command: ClusterCommand, task id: Int, owner: String?, forwarding: Bool) throws -> TransferTask {
        if case .elsewhere(let holder) = try holdForCommand(id, owner: owner) {
            guard forwarding else {
                throw ServiceError.conflict(code: "task_held_elsewhere", message: "task \(id) moved to node \(holder) meanwhile; retry")
            }
            try forward(command, task: id, to: holder, owner: owner)
        }
        switch command {
        case .update(let update): return try updateHere(task: id, update, owner: owner)
        case .resume:
            // A stream opens its connection, a paused transfer goes on in the engine, any other is
            // scheduled, or fails when its URL's scheme is not supported (`TaskMachine`).
            return try act(on: id, owner: owner) { s, deliveries in
                let actions = try self.command(&s, task: id, .resume)
                perform(actions, task: id, &s, &deliveries)
            }
        case .suspend:
            // A paused transfer keeps its connection and its slot (the origin still sees the
            // connection); suspended longer than its timeout, it fails with timedOut. A running
            // stream refuses (409): it has nothing to pause (`TaskMachine`); so does a task whose
            // transfer has ended and whose completion waits for its cache decision.
            return try act(on: id, owner: owner) { s, deliveries in
                if s.tasks[id]?.cacheDecision != nil {
                    throw ServiceError.conflict(code: "decision_pending", message: "task \(id) has its whole response and waits for its cache decision: answer it, or cancel the task")
                }
                let actions = try self.command(&s, task: id, .suspend)
                perform(actions, task: id, &s, &deliveries)
            }
        case .cancel(let produceResumeData):
            return try act(on: id, owner: owner) { s, deliveries in cancel(&s, task: id, keepPartial: produceResumeData, &deliveries) }
        case .decide(let decisionId, let answer):
            return try act(on: id, owner: owner) { s, deliveries in
                try resolveDecision(&s, task: id, decisionId, answer, timedOut: false, &deliveries)
            }
        }
    }

    private func updateHere(task id: Int, _ update: TaskUpdate, owner: String?) throws -> TransferTask {
        try onHeldOrStored(id, owner: owner, held: { try updateHeld(task: id, update, owner: owner) },
                           stored: { try updateStored(task: id, update, owner: owner) })
    }

    private func updateHeld(task id: Int, _ update: TaskUpdate, owner: String?) throws -> TransferTask {
        let (task, deliveries) = try state.withLock { s throws -> (TransferTask, Deliveries) in
            _ = try visibleTask(s, id, owner)
            if let priority = update.priority {
                s.tasks[id]?.task.priority = priority
                s.scheduler.reprioritise(taskId: id, priority: priority.value)
            }
            if let description = update.description { s.tasks[id]?.task.description = description }
            if let patch = update.bandwidthLimit { setBandwidthLimit(&s, task: id, patch) }
            if let priority = update.priority, s.tasks[id]?.inEngine == true { engine.submit(.setPriority(taskId: id, priority: priority.value)) }
            var deliveries = Deliveries()
            changed(&s, task: id, persist: true, &deliveries)
            admit(&s, &deliveries)
            let task = s.tasks[id]!.task
            returnAfterCommand(&s, task: id, &deliveries)
            return (task, deliveries)
        }
        try commit(delivering: deliveries)
        return task
    }

    public func resume(task id: Int, owner: String?) throws -> TransferTask {
        try settled { try carryOut(.resume, task: id, owner: owner, forwarding: true) }
    }

    public func suspend(task id: Int, owner: String?) throws -> TransferTask {
        try settled { try carryOut(.suspend, task: id, owner: owner, forwarding: true) }
    }

    /// cancel(), or for a download cancel(byProducingResumeData:): the partial file is kept and
    /// the task's error carries resume data once the engine has stopped the transfer.
    public func cancel(task id: Int, produceResumeData: Bool = false, owner: String?) throws -> TransferTask {
        try settled { try carryOut(.cancel(produceResumeData: produceResumeData), task: id, owner: owner, forwarding: true) }
    }

    /// Runs a state change on a visible, not yet completed task and returns the task after it.
    func act(on id: Int, owner: String?, _ body: (inout ServiceState, inout Deliveries) throws -> Void) throws -> TransferTask {
        // One that left memory has completed (and is still refused when it is not visible); in a
        // cluster, one no node holds was brought here first (`carryOut`).
        try onHeldOrStored(id, owner: owner, held: { try actOnHeld(id, owner: owner, body) }, stored: {
            throw ServiceError.conflict(code: "task_completed", message: "task \(id) has completed")
        })
    }

    private func actOnHeld(_ id: Int, owner: String?, _ body: (inout ServiceState, inout Deliveries) throws -> Void) throws -> TransferTask {
        let (task, deliveries) = try state.withLock { s throws -> (TransferTask, Deliveries) in
            guard s.accepting else { throw ServiceError.shuttingDown }
            let entry = try visibleTask(s, id, owner)
            guard entry.task.state != .completed else {
                throw ServiceError.conflict(code: "task_completed", message: "task \(id) has completed")
            }
            var deliveries = Deliveries()
            try body(&s, &deliveries)
            let task = s.tasks[id]!.task
            returnAfterCommand(&s, task: id, &deliveries)
            return (task, deliveries)
        }
        // What the client is told has happened is on disk first. A refused change stays in
        // effect in memory (the engine may already act on it) and stays queued: the 507/503
        // says it is not durable yet, and the client re-reads the task.
        try commit(delivering: deliveries)
        return task
    }

    /// In the engine, the task is canceling until the engine has stopped its transfer; out of it
    /// (queued, suspended after a restart or past its timeout), it completes as cancelled at
    /// once (`completeCancelled`). A completed task stays as it is.
    func cancel(_ s: inout ServiceState, task id: Int, keepPartial: Bool = false, _ deliveries: inout Deliveries) {
        guard let kind = s.tasks[id]?.task.kind else { return }
        let actions = (try? command(&s, task: id, .cancel)) ?? []  // refused only when completed
        guard !actions.isEmpty else { return }
        s.tasks[id]?.cancelKeepsPartial = keepPartial && kind == .download
        perform(actions, task: id, &s, &deliveries)
    }

    /// The response body of a completed data task.
    public func body(task id: Int, owner: String?) throws -> (body: Data, contentType: String?) {
        let (task, entry) = try visibleRecord(id, owner: owner)
        let kept = entry?.responseBody
        try requireSuccess(task, ready: "its body")
        guard task.kind != .download else {
            throw ServiceError.conflict(code: "no_body", message: "task \(id) is a download: its body is a file, at GET /v1/tasks/\(id)/file")
        }
        let body = try kept ?? store.body(taskId: id) ?? Data()
        return (body, task.response.flatMap { ResponseInfo.value(of: "Content-Type", in: $0.headers) })
    }

    /// A completed download's file: its path, size, media type and suggested filename.
    public func downloadedFile(task id: Int, owner: String?) throws -> (path: String, size: Int, mimeType: String?, filename: String?) {
        let task = try visibleRecord(id, owner: owner).task
        guard task.kind == .download else {
            throw ServiceError.conflict(code: "not_a_download", message: "task \(id) is a \(task.kind.rawValue) task; its response is at GET /v1/tasks/\(id)/body")
        }
        // A download whose destination was taken failed, but its file is whole: it is served.
        try requireSuccess(task, ready: "its file", unless: task.error?.reason == DownloadConflict.destinationExistsReason && task.location != nil)
        guard let path = task.location, let size = FileSystem.size(of: path) else {
            throw ServiceError.notFound("the file of task \(id) is no longer there (moved or deleted on the host)")
        }
        return (path, size, task.response?.mimeType, task.response?.suggestedFilename)
    }

    /// Refuses a task that has not completed, or that failed (409), then waits until its
    /// completion and body are committed, so what is served is what a restart would find.
    private func requireSuccess(_ task: TransferTask, ready what: String, unless failureIsServed: Bool = false) throws {
        guard task.state == .completed else {
            throw ServiceError.conflict(code: "task_not_completed", message: "task \(task.id) is \(task.state.rawValue); \(what) is ready when it completes")
        }
        if let error = task.error, !failureIsServed {
            throw ServiceError.conflict(code: "no_body", message: "task \(task.id) failed (\(error.name)): \(error.message)")
        }
        store.flush()
    }

    // MARK: scheduling, under the lock

    /// Queues task `id` for admission again (`TaskMachine`'s `enqueue`).
    func enqueue(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], s.sessions[entry.task.sessionId] != nil else { return }
        perform(transition(&s, task: id, .enqueue), task: id, &s, &deliveries)
    }

    /// Hands the scheduler a ticket for queued task `id`.
    func enqueueTicket(_ s: inout ServiceState, task id: Int) {
        guard let entry = s.tasks[id], let session = s.sessions[entry.task.sessionId] else { return }
        s.tasks[id]?.queuedAt = .now
        let schedulingClass = entry.task.schedulingClass
        s.scheduler.enqueue(Scheduler.Ticket(
            taskId: id, schedulingClass: schedulingClass, priority: entry.task.priority.value,
            host: Scheduler.hostKey(sessionId: session.id, url: entry.task.originalRequest.url),
            hostLimit: session.configuration.httpMaximumConnectionsPerHost,
            session: session.id, sessionLimit: session.configuration.maximumConcurrentTasks,
            discretionary: session.configuration.isDiscretionary,
            // A download continues from its partial file with a range: stopping it loses nothing.
            // A tus upload continues too, but between steps only; data and uploads would start over.
            preemptible: schedulingClass == .background && entry.task.kind == .download,
            // Who sees it listed: what `isVisible(to:)` of the task and of its session allow together.
            audience: entry.task.owner ?? session.owner))
    }

    /// Hands every task the scheduler admits to the engine, and stops the background transfers
    /// it preempts (they come back through `detached`, queued again with their partial files).
    func admit(_ s: inout ServiceState, _ deliveries: inout Deliveries) {
        guard s.accepting else { return }
        s.scheduler.discretionaryWindowOpen = configuration.discretionaryWindow?.contains(Date()) ?? true
        for decision in s.scheduler.admit() {
            switch decision {
            case .start(let id): start(&s, task: id, &deliveries)
            case .preempt(let id): preempt(&s, task: id, &deliveries)
            case .grant(let id, let host): grantConnection(&s, task: id, host: host)
            }
        }
    }

    private func preempt(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        let actions = transition(&s, task: id, .preempt)
        guard !actions.isEmpty else { return }  // not in the engine
        s.tasks[id]?.task.preemptions += 1
        perform(actions, task: id, &s, &deliveries)
    }

    private func start(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], let session = s.sessions[entry.task.sessionId] else { return }
        let actions = transition(&s, task: id, .admit)
        guard actions == [.recordStart, .startTransfer] else {
            perform(actions, task: id, &s, &deliveries)  // not running: its slot goes back
            return
        }
        if entry.task.startedAt != nil {
            clearAttempt(&s, task: id)
            // A download that goes on from its partial file still has those bytes.
            if entry.task.kind == .download, let resume = entry.task.resume {
                s.tasks[id]?.task.progress.bytesReceived = resume.offset
                s.tasks[id]?.task.progress.bytesExpectedToReceive = resume.expectedLength
            }
        }
        let waited = entry.queuedAt.map { ContinuousClock.now - $0 }
        if let waited {
            metrics.admitted(after: waited, entry.task.schedulingClass)
            s.tasks[id]?.queuedAt = nil
        }
        let now = Date()
        s.tasks[id]?.task.startedAt = now  // recordStart
        s.tasks[id]?.task.currentRequest = entry.task.originalRequest
        s.tasks[id]?.inEngine = true
        // A data task's body as it arrives, for readers that follow it (from the network or the
        // URL cache); an earlier attempt's readers are told that attempt ended.
        if let ended = s.tasks[id]?.liveBody?.finish(.failed("the attempt ended; the task is tried again")) { deliveries.add(ended.run) }
        s.tasks[id]?.liveBody = entry.task.kind == .data && LocalScheme(url: entry.task.originalRequest.url) == nil ? LiveBody() : nil
        guard let request = requestAfterCache(&s, task: id, &deliveries) else { return }  // the URL cache answered
        let elapsed = now.timeIntervalSince(entry.task.createdAt)
        var job = TransferJob(
            taskId: id, request: request, body: entry.requestBody, streamedBody: entry.task.streamedBody,
            resourceTimeout: max(0.001, session.configuration.timeoutIntervalForResource - elapsed),
            maxBodySize: configuration.maxDataTaskBodySize, startPaused: false)
        job.decodedSizeLimit = configuration.decodedSizeLimit
        job.bodyStream = bodyStreamSnapshot(of: entry.task)
        if entry.task.kind == .download {
            job.download = downloadTarget(of: entry.task)
            job.resume = entry.task.resume
            // Nothing of an ephemeral session is recorded, its download offsets included.
            job.checkpoints = isRecorded(s, session: session.id)
        } else if entry.task.kind == .data, let disposition = entry.task.responseDisposition {
            job.responseDisposition = disposition
            if disposition.mayBecomeDownload {
                job.conversionTarget = downloadTarget(of: entry.task)
                job.checkpoints = isRecorded(s, session: session.id)
            }
        }
        job.checksum = entry.task.checksum
        job.tus = entry.task.resumable
        job.liveBody = s.tasks[id]?.liveBody
        if job.tus == nil {
            job.decisions = entry.task.decisions
            // A response the client may answer with becomeDownload needs the file it would go to.
            if entry.task.kind == .data, entry.task.decisions.contains(.response), job.conversionTarget == nil {
                job.conversionTarget = downloadTarget(of: entry.task)
                job.checkpoints = isRecorded(s, session: session.id)
            }
        }
        // A tus upload's steps are judged by its run, not answered with credentials.
        if job.tus == nil { job.credentials = SessionCredentials(store: credentials, scope: CredentialScope(session, requester: entry.task.owner)) }
        job.urlLogin = entry.urlLogin
        job.adopt(entry.task)
        job.cookies = cookieHandling(for: entry.task.originalRequest, in: session, owner: entry.task.owner)
        job.adopt(session.configuration)
        job.fileURLRoots = configuration.fileURLRoots
        job.sshKnownHostsFile = configuration.resolvedSSHKnownHostsFile
        engine.submit(.start(job))
        // Stored now: after a crash, a task stored as started is not sent again (its request may
        // not be repeatable) but ends with networkConnectionLost, as URLSession's would.
        changed(&s, task: id, persist: true, &deliveries)
        if let started = s.tasks[id]?.task { logStarted(started, waited: waited, &deliveries) }
    }

    /// Where a download's bytes go: its partial file, then its destination or the default folder.
    func downloadTarget(of task: TransferTask) -> DownloadTarget {
        let root = TenantDownloads.root(configuration.downloadsRoot, owner: task.owner)
        return DownloadTarget(
            partialPath: partialPath(of: task.id),
            destinationPath: task.destination.map { root + "/" + $0 },
            defaultDirectory: configuration.dataDirectory + "/files/\(task.id)",
            root: root,
            conflict: task.conflict ?? .fail,
            checksum: task.checksum)
    }

    /// Where a running download's bytes are written until it succeeds.
    /// (In a cluster, a name of the task's lease: `LeasedPartials`.)
    func partialPath(of id: Int) -> String {
        clusterWork?.partials.path(of: id) ?? configuration.dataDirectory + "/partial/\(id).part"
    }

    /// Ends a task: records the outcome, stores the body, frees its slot, reports
    /// didCompleteWithError, and lets the next queued tasks in.
    func complete(_ s: inout ServiceState, task id: Int, error: TaskError?, body: Data?, _ deliveries: inout Deliveries) {
        var recorded = false
        for action in transition(&s, task: id, .finish) {  // none once it has completed
            if action == .recordCompletion {
                recordCompletion(&s, task: id, error: error, body: body, &deliveries)
                recorded = true
            } else {
                perform(action, task: id, &s, &deliveries)
            }
        }
        if recorded, let task = s.tasks[id]?.task { logCompleted(task, &deliveries) }
        // A slot freed: the cluster's queue may have a task for it, once the completion that
        // gives the lease up is committed (until then the claim still counts it against the caps,
        // and a claim before it would find no room and leave the slot to the next poll).
        if let work = clusterWork { store.afterCommit { work.nudge() } }
    }

    /// A completed task's outcome; it lets go of what it held for its transfer.
    private func recordCompletion(_ s: inout ServiceState, task id: Int, error: TaskError?, body: Data?, _ deliveries: inout Deliveries) {
        guard var task = s.tasks[id]?.task else { return }
        // The URL's login was for this task's transfer only: it goes with it (resume data,
        // made before this, carries it sealed for a continuation).
        task.sealedLogin = nil
        task.decision = nil  // nothing waits any more
        s.tasks[id]?.cacheDecision = nil
        s.tasks[id]?.urlLogin = nil
        if let live = s.tasks[id]?.liveBody {
            // Readers that follow the body get its end, or the failure (after the lock: a stream
            // reader read to the end lets the task go, under it).
            let ended = error.map { live.finish(.failed("the task failed (\($0.name)): \($0.message)")) } ?? live.finish(with: body ?? Data())
            deliveries.add(ended.run)
            s.tasks[id]?.liveBody = nil
        }
        task.error = error
        task.completedAt = Date()
        task.progress.bytesPerSecond = 0
        s.tasks[id]?.task = task
        s.tasks[id]?.inEngine = false
        s.tasks[id]?.queuedAt = nil
        countCompletion(task)
        s.tasks[id]?.requestBody = nil  // a completed task never sends again; the store keeps its copy
        // A data task that became a stream stays while its reader is behind (`bodyStreamFinished`).
        if s.tasks[id]?.streamOfBody == nil { markLeaving(&s, task: id) }
        if task.bodyStream != nil, !s.appendingChunks.contains(id) { unlink(bodySpoolPath(of: id)) }
        if let body {
            if isRecorded(s, session: task.sessionId) {
                store.enqueue(.saveBody(taskId: id, body: body))
            } else {
                s.tasks[id]?.responseBody = body
            }
        }
    }
}
