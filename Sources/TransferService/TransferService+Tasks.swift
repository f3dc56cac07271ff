internal import Glibc
internal import Synchronization
public import FoundationEssentials
internal import JSONModel
public import TransferModel
internal import TransferEngine
internal import TransferStore

extension TransferService {
    public func task(_ id: Int, owner: String?) throws -> TransferTask {
        let task = try state.withLock { s in try visibleTask(s, id, owner).task }
        if task.state == .completed { store.flush() }  // report a completion only once it is durable
        return task
    }

    func visibleTask(_ s: ServiceState, _ id: Int, _ owner: String?) throws -> TaskEntry {
        guard let entry = s.tasks[id], entry.task.isVisible(to: owner),
              s.sessions[entry.task.sessionId]?.isVisible(to: owner) == true else {
            throw ServiceError.notFound("no task \(id)")
        }
        return entry
    }

    /// A page of a session's tasks in id order, optionally of one state.
    public func listTasks(in sessionId: String, state filter: TaskState?, owner: String?, limit: Int, cursor: String?) throws -> (items: [TransferTask], next: String?) {
        let page = try state.withLock { s throws -> (items: [TransferTask], next: String?) in
            _ = try visibleSession(s, sessionId, owner)
            var after = 0
            if let cursor {
                guard let value = Int(cursor), value >= 0 else { throw ServiceError.invalidQuery("unknown cursor") }
                after = value
            }
            var items: [TransferTask] = []
            for taskId in s.tasksBySession[sessionId] ?? [] where taskId > after {
                guard let task = s.tasks[taskId]?.task, task.isVisible(to: owner), filter == nil || task.state == filter else { continue }
                items.append(task)
                if items.count > limit { break }
            }
            return (Array(items.prefix(limit)), items.count > limit ? items[limit - 1].id.description : nil)
        }
        if page.items.contains(where: { $0.state == .completed }) { store.flush() }  // completions once durable
        return page
    }

    /// PATCH: priority re-orders a queued task at once; description is replaced.
    public func update(task id: Int, _ update: TaskUpdate, owner: String?) throws -> TransferTask {
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
            return (s.tasks[id]!.task, deliveries)
        }
        try commit(delivering: deliveries)
        return task
    }

    public func resume(task id: Int, owner: String?) throws -> TransferTask {
        try act(on: id, owner: owner) { s, deliveries in
            guard let entry = s.tasks[id], entry.task.state == .suspended else { return }
            s.tasks[id]?.task.state = .running
            if entry.task.kind == .stream {
                startStream(&s, task: id, &deliveries)  // a stream is only ever suspended before it connected
            } else if entry.inEngine {
                engine.submit(.resume(taskId: id))
            } else if RequestURL.isSupported(entry.task.originalRequest.url) {
                schedule(&s, task: id)
            } else {
                complete(&s, task: id, error: TaskError(.unsupportedURL, "the URL scheme is not supported"), body: nil, &deliveries)
                return
            }
            changed(&s, task: id, persist: true, &deliveries)
            admit(&s, &deliveries)
        }
    }

    public func suspend(task id: Int, owner: String?) throws -> TransferTask {
        try act(on: id, owner: owner) { s, deliveries in
            guard let entry = s.tasks[id], entry.task.state == .running else { return }
            // A connection the client drives has nothing to pause: it reads and writes when it wants.
            guard entry.task.kind != .stream else { throw ServiceError.conflict(code: "stream_not_suspendable", message: "a running stream task cannot be suspended; stop reading and writing, or cancel it") }
            s.tasks[id]?.task.state = .suspended
            if entry.inEngine {
                // The paused transfer keeps its connection and its slot (the origin still sees
                // the connection); suspended longer than its timeout, it fails with timedOut.
                engine.submit(.pause(taskId: id))
            } else {
                s.scheduler.remove(taskId: id)
                // A task held for a retry or for connectivity waits for its resume instead.
                if releaseHold(&s, task: id) { s.tasks[id]?.task.phase = .queued }
            }
            changed(&s, task: id, persist: true, &deliveries)
        }
    }

    /// cancel(), or for a download cancel(byProducingResumeData:): the partial file is kept and
    /// the task's error carries resume data once the engine has stopped the transfer.
    public func cancel(task id: Int, produceResumeData: Bool = false, owner: String?) throws -> TransferTask {
        try act(on: id, owner: owner) { s, deliveries in cancel(&s, task: id, keepPartial: produceResumeData, &deliveries) }
    }

    /// Runs a state change on a visible, not yet completed task and returns the task after it.
    private func act(on id: Int, owner: String?, _ body: (inout ServiceState, inout Deliveries) throws -> Void) throws -> TransferTask {
        let (task, deliveries) = try state.withLock { s throws -> (TransferTask, Deliveries) in
            guard s.accepting else { throw ServiceError.shuttingDown }
            let entry = try visibleTask(s, id, owner)
            guard entry.task.state != .completed else {
                throw ServiceError.conflict(code: "task_completed", message: "task \(id) has completed")
            }
            var deliveries = Deliveries()
            try body(&s, &deliveries)
            return (s.tasks[id]!.task, deliveries)
        }
        // What the client is told has happened is on disk first. A refused change stays in
        // effect in memory (the engine may already act on it) and stays queued: the 507/503
        // says it is not durable yet, and the client re-reads the task.
        try commit(delivering: deliveries)
        return task
    }

    func cancel(_ s: inout ServiceState, task id: Int, keepPartial: Bool = false, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], entry.task.state != .completed else { return }
        if entry.inEngine {
            guard entry.task.state != .canceling else { return }
            s.tasks[id]?.task.state = .canceling
            s.tasks[id]?.cancelKeepsPartial = keepPartial && entry.task.kind == .download
            changed(&s, task: id, persist: true, &deliveries)
            engine.submit(.cancel(taskId: id, keepPartial: keepPartial && entry.task.kind == .download))
            return
        }
        var error = TaskError(.cancelled, "cancelled")
        if entry.task.kind == .download {
            // Not in the engine (queued, suspended after a restart or past its timeout): a kept
            // partial file goes with resume data when asked for, else it is deleted.
            if keepPartial, let resume = checkpointedResume(of: entry.task) {
                error.resumeData = sealedResumeData(for: entry.task, at: resume)
                s.tasks[id]?.task.progress.bytesReceived = resume.offset
            } else {
                unlink(partialPath(of: id))
            }
        }
        complete(&s, task: id, error: error, body: nil, &deliveries)
    }

    /// The response body of a completed data task.
    public func body(task id: Int, owner: String?) throws -> (body: Data, contentType: String?) {
        let (task, kept) = try state.withLock { s in
            let entry = try visibleTask(s, id, owner)
            return (entry.task, entry.responseBody)
        }
        try requireSuccess(task, ready: "its body")
        guard task.kind != .download else {
            throw ServiceError.conflict(code: "no_body", message: "task \(id) is a download: its body is a file, at GET /v1/tasks/\(id)/file")
        }
        let body = try kept ?? store.body(taskId: id) ?? Data()
        return (body, task.response.flatMap { ResponseInfo.value(of: "Content-Type", in: $0.headers) })
    }

    /// A completed download's file: its path, size, media type and suggested filename.
    public func downloadedFile(task id: Int, owner: String?) throws -> (path: String, size: Int, mimeType: String?, filename: String?) {
        let task = try state.withLock { s in try visibleTask(s, id, owner).task }
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

    func enqueue(_ s: inout ServiceState, task id: Int) {
        guard let entry = s.tasks[id], let session = s.sessions[entry.task.sessionId] else { return }
        s.tasks[id]?.task.phase = .queued
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
            preemptible: schedulingClass == .background && entry.task.kind == .download))
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
            }
        }
    }

    private func preempt(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], entry.inEngine else { return }
        s.tasks[id]?.task.phase = .queued
        s.tasks[id]?.task.preemptions += 1
        engine.submit(.preempt(taskId: id))
        emit(&s, session: entry.task.sessionId, task: id, .wasPreempted, [:], &deliveries)
        changed(&s, task: id, persist: true, &deliveries)
    }

    private func start(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], let session = s.sessions[entry.task.sessionId] else { return }
        if entry.task.startedAt != nil {
            reset(&s, task: id)
            // A download that goes on from its partial file still has those bytes.
            if entry.task.kind == .download, let resume = entry.task.resume {
                s.tasks[id]?.task.progress.bytesReceived = resume.offset
                s.tasks[id]?.task.progress.bytesExpectedToReceive = resume.expectedLength
            }
        }
        if let queuedAt = entry.queuedAt {
            metrics.admitted(after: .now - queuedAt, entry.task.schedulingClass)
            s.tasks[id]?.queuedAt = nil
        }
        let now = Date()
        s.tasks[id]?.task.startedAt = now
        s.tasks[id]?.task.phase = .connecting
        s.tasks[id]?.task.currentRequest = entry.task.originalRequest
        s.tasks[id]?.inEngine = true
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
        // A tus upload's steps are judged by its run, not answered with credentials.
        if job.tus == nil { job.credentials = SessionCredentials(store: credentials, scope: CredentialScope(session, requester: entry.task.owner)) }
        job.urlLogin = entry.urlLogin
        job.adopt(entry.task)
        job.cookies = cookieHandling(for: entry.task.originalRequest, in: session, owner: entry.task.owner)
        job.adopt(session.configuration)
        job.fileURLRoots = configuration.fileURLRoots
        job.sshKnownHostsFile = configuration.resolvedSSHKnownHostsFile
        engine.submit(.start(job))
        changed(&s, task: id, persist: true, &deliveries)
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
    func partialPath(of id: Int) -> String { configuration.dataDirectory + "/partial/\(id).part" }

    /// Ends a task: records the outcome, stores the body, frees its slot, reports
    /// didCompleteWithError, and lets the next queued tasks in.
    func complete(_ s: inout ServiceState, task id: Int, error: TaskError?, body: Data?, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], entry.task.state != .completed else { return }
        s.scheduler.remove(taskId: id)
        releaseHold(&s, task: id)
        var task = entry.task
        task.state = .completed
        // The URL's login was for this task's transfer only: it goes with it (resume data,
        // made before this, carries it sealed for a continuation).
        task.sealedLogin = nil
        s.tasks[id]?.urlLogin = nil
        task.phase = .done
        task.error = error
        task.completedAt = Date()
        task.progress.bytesPerSecond = 0
        s.tasks[id]?.task = task
        s.tasks[id]?.inEngine = false
        s.tasks[id]?.queuedAt = nil
        countCompletion(task)
        s.tasks[id]?.requestBody = nil  // a completed task never sends again; the store keeps its copy
        if task.bodyStream != nil, !s.appendingChunks.contains(id) { unlink(bodySpoolPath(of: id)) }
        if let body {
            if isRecorded(s, session: task.sessionId) {
                store.enqueue(.saveBody(taskId: id, body: body))
            } else {
                s.tasks[id]?.responseBody = body
            }
        }
        changed(&s, task: id, persist: true, &deliveries)
        collectMetrics(&s, task: task, &deliveries)
        emit(&s, session: task.sessionId, task: id, .didCompleteWithError, ["error": error.map { JSONValue(encoding: $0) } ?? .null], &deliveries)
        checkInvalidation(&s, session: task.sessionId, &deliveries)
        admit(&s, &deliveries)
    }
}
