internal import Glibc
internal import Synchronization
internal import FoundationEssentials
public import TransferModel
internal import TransferStore

extension TransferService {
    /// The most tasks one `createTasks` call takes (`POST .../tasks:batch`).
    public static let maxBatchSize = TaskBatchCreate.maxCount

    /// Creates a task in a session. It runs (queued until admitted) unless created suspended.
    /// Returns once the task is durably stored.
    public func createTask(in sessionId: String, _ request: TaskCreate, owner: String?) throws -> TransferTask {
        var folders = RootedPath.CheckedFolders()
        return try create(in: sessionId, [try prepare(request, owner: owner, folders: &folders)], owner: owner)[0]
    }

    /// Creates tasks all or nothing: every spec is checked first (an error names its index,
    /// `tasks[3].request.url`), then all are created under one hold of the lock, stored in one
    /// transaction and queued in the order given, so equal priorities are admitted in that
    /// order. Returns the tasks in that order once they are durably stored.
    public func createTasks(in sessionId: String, _ requests: [TaskCreate], owner: String?) throws -> [TransferTask] {
        guard requests.count <= Self.maxBatchSize else {
            throw InputError.tooLarge(field: "tasks", message: "has \(requests.count) tasks; a batch takes at most \(Self.maxBatchSize)")
        }
        var prepared: [PreparedTask] = []
        prepared.reserveCapacity(requests.count)
        var folders = RootedPath.CheckedFolders()
        for (index, request) in requests.enumerated() {
            do {
                prepared.append(try prepare(request, owner: owner, folders: &folders))
            } catch {
                throw InputError.located(error, under: "tasks[\(index)]")
            }
        }
        return try create(in: sessionId, prepared, owner: owner)
    }

    /// Checks one spec and does the work that needs no lock: opens resume data, encodes an
    /// inline body, resolves a blob, file or form body, checks the destination.
    private func prepare(_ request: TaskCreate, owner: String?, folders: inout RootedPath.CheckedFolders) throws -> PreparedTask {
        // What to send: the client's request, or the one sealed inside resume data.
        let resume = try request.resumeData.map { try resumeSealer.open($0, owner: owner, field: "resumeData") }
        guard request.request != nil || resume != nil else { throw InputError.invalidValue(field: "request", message: "is required") }
        let body = request.request?.body?.inlineData
        let streamed = try request.request?.body.flatMap { try streamedBody($0, owner: owner) }
        let destination = request.destination ?? resume?.destination
        if let destination {
            let root = try tenantDownloadsRoot(owner, folders: &folders)
            _ = try RootedPath.resolve(destination, root: root, field: "destination", code: "invalid_destination", checked: &folders)
        }
        // Only a destination can be taken: a download's default folder is its own.
        let conflict = destination == nil ? nil : request.conflict ?? resume?.conflict ?? .fail
        // A download continued from resume data keeps the checksum it had, unless given anew.
        let checksum = request.checksum ?? resume?.checksum
        return PreparedTask(spec: request, resume: resume, body: body, streamed: streamed, destination: destination, conflict: conflict, checksum: checksum)
    }

    /// Creates prepared tasks in one hold of the lock; nothing in it fails once the session is
    /// found accepting, so either all tasks exist afterwards or none does. They start only once
    /// their rows are committed (`settleCreation`): a task the store refused never runs.
    private func create(in sessionId: String, _ prepared: [PreparedTask], owner: String?) throws -> [TransferTask] {
        try learnSession(sessionId)
        // In a cluster with quotas, the tenant's usage on every node, read in the tenant's
        // creation turn (held until the commit: no other node creates for it meanwhile), before
        // the lock.
        let turn = readsStoredUsage ? try beginTenantCreations(owner: owner) : nil
        defer { turn?.end() }
        let stored = readsStoredUsage ? try storedUsage(owner: owner) : nil
        let (ids, written, created, ephemeral) = try state.withLock { s throws -> (Range<Int>, Int?, Deliveries, Bool) in
            guard s.accepting else { throw ServiceError.shuttingDown }
            let session = try visibleSession(s, sessionId, owner)
            guard session.state == .active else {
                throw ServiceError.conflict(code: "session_invalidated", message: "session \(sessionId) is \(session.state.rawValue) and accepts no new tasks")
            }
            // Before anything is made: a batch that would pass a quota is refused whole.
            try checkQuotas(s, owner: owner, adding: prepared.count, stored: stored)
            if session.kind == .background, prepared.contains(where: { $0.spec.kind == .stream }) {
                // As URLSession: a connection the client drives cannot go on while it is away.
                throw InputError.invalidValue(field: "kind", message: "stream tasks cannot run in a background session; use a default or ephemeral session")
            }
            let now = Date()
            var deliveries = Deliveries()
            var saved: [StoreOperation.TaskRow] = []
            saved.reserveCapacity(prepared.count)
            let ids = try takeTaskIds(&s, prepared.count)
            s.tasksBySession[sessionId, default: []].append(contentsOf: ids)
            for (id, task) in zip(ids, prepared) {
                let entry = insert(&s, task, id: id, session: session, owner: owner, now: now)
                noteTaskChange(&s, task: entry.task, &deliveries)
                saved.append(StoreOperation.TaskRow(task: entry.task, requestBody: entry.requestBody, feedSeq: s.taskChanges.seq,
                                                    placement: placement(s, entry)))
            }
            // One operation, so one transaction, even if the writer has to retry it alone.
            let written: Int?
            if isRecorded(s, session: sessionId) {
                written = store.enqueueForSettle(.saveTasks(saved))
            } else if let last = ids.last {
                // An ephemeral task's id is still reserved, so a restart never gives it again.
                written = store.enqueueForSettle(.reserveTaskId(last))
            } else {
                written = nil
            }
            if stored != nil, written != nil { s.creationsInFlight.begin(owner: owner, count: ids.count) }
            return (ids, written, deliveries, session.kind == .ephemeral)
        }
        do {
            defer {
                // Committed or refused: the next quota read sees it in the store, or not at all.
                if stored != nil, written != nil { state.withLock { $0.creationsInFlight.end(owner: owner, count: ids.count) } }
            }
            try settleCreation(of: ids, in: sessionId, written)
        } catch {
            created.run()
            throw error
        }
        if ephemeral, isClustered { routeEphemeral(session: sessionId, tasks: Array(ids)) }
        let local = try takeWhereMade(ids)
        let (tasks, started) = state.withLock { s -> ([TransferTask], Deliveries) in
            var deliveries = Deliveries()
            for id in ids {
                // A client that listed the task meanwhile may have suspended or cancelled it.
                guard let entry = s.tasks[id], entry.task.state == .running else { continue }
                let url = entry.task.originalRequest.url
                if entry.task.kind == .stream {
                    startStream(&s, task: id, &deliveries)
                } else if RequestURL.isSupported(url) {
                    // In a cluster the queue has it, and a claim decides where it runs.
                    if isClustered, isRecorded(s, session: sessionId), !local.contains(id) { continue }
                    schedule(&s, task: id, &deliveries)
                } else {
                    complete(&s, task: id, error: TaskError(.unsupportedURL, "the URL scheme is not supported: \(url.prefix(200))"), body: nil, &deliveries)
                }
            }
            admit(&s, &deliveries)
            // Reserved: a compactMap grows its array by copying the large task values each time
            // (2% of a batch of 10,000, under the lock).
            var tasks: [TransferTask] = []
            tasks.reserveCapacity(ids.count)
            for id in ids { if let task = s.tasks[id]?.task { tasks.append(task) } }
            if isClustered, isRecorded(s, session: sessionId) {
                // Committed: unclaimed tasks leave memory for the queue (a completed one, once
                // its completion is committed, as any other).
                for id in ids where s.tasks[id]?.leaseEpoch == 0 && s.tasks[id]?.task.state != .completed && !local.contains(id) {
                    forget(&s, task: id)
                }
                clusterWork?.nudge()
            }
            return (tasks, deliveries)
        }
        // A task completed at once (an unsupported scheme) is reported once that is durable too;
        // only its creation is refused when the store fails, so this waits without throwing.
        if tasks.contains(where: { $0.state == .completed }) { store.flush() }
        created.run()
        started.run()
        logCreated(tasks, session: sessionId)
        return tasks
    }

    /// In a cluster, leases this node the committed tasks among `ids` that must run where they
    /// were made (`runsWhereMade`): they were written out of the queue, so no other node claims
    /// them meanwhile. Returns their ids.
    private func takeWhereMade(_ ids: Range<Int>) throws -> Set<Int> {
        guard let coordinator = store.coordinator, let work = clusterWork else { return [] }
        let local = state.withLock { s in
            ids.filter { id in s.tasks[id].map { isRecorded(s, session: $0.task.sessionId) && Self.runsWhereMade($0.task) } ?? false }
        }
        guard !local.isEmpty else { return [] }
        try work.onQueue { node in
            for id in local {
                guard let taken = try coordinator.take(id: id, node: node, leaseSeconds: configuration.leaseTimeout) else { continue }
                state.withLock { s in s.tasks[id]?.leaseEpoch = Int32(clamping: taken.epoch) }
            }
        }
        return Set(local)
    }

    /// Builds one task from its prepared spec and puts it in the state (not yet queued).
    private func insert(_ s: inout ServiceState, _ prepared: PreparedTask, id: Int, session: Session, owner: String?, now: Date) -> TaskEntry {
        let request = prepared.spec
        var info: RequestInfo
        if let resume = prepared.resume {
            info = resume.request
            info.url = resume.url
        } else {
            // `prepare` made sure there is a request when there is no resume data.
            let spec = request.request ?? RequestSpec(url: "")
            info = RequestInfo(spec: spec, bodyLength: prepared.body?.count ?? prepared.streamed?.size, configuration: session.configuration)
            if let contentType = prepared.streamed?.contentType {
                // A form's boundary must match its bytes, so its Content-Type is ours.
                info.headers = info.headers.filter { $0.key.lowercased() != "content-type" }
                info.headers["Content-Type"] = contentType
            }
        }
        // A user and password in the URL become the task's own login; the URL is kept without.
        let (url, given) = URLLogin.split(info.url)
        let login = given ?? prepared.resume?.login
        info.url = url
        info.mainDocumentURL = info.mainDocumentURL.map(URLLogin.strip)
        var task = TransferTask(id: id, sessionId: session.id, kind: request.kind, state: request.state,
                                priority: request.priority, description: request.description,
                                request: info, owner: owner, now: now)
        task.destination = prepared.destination
        task.sealedLogin = login.flatMap { credentials.sealLogin($0, task: id, owner: owner) }
        task.conflict = prepared.conflict
        task.earliestBeginDate = request.earliestBeginDate
        task.bandwidthLimit = request.bandwidthLimit
        task.responseDisposition = request.responseDisposition
        task.dataInEvents = request.dataInEvents
        // Its own list, else the session's default: those that apply to its kind.
        // (A task that declares responseDisposition rules decides its response by them.)
        task.decisions = request.decisions ?? DecisionSet(session.configuration.decisions.kinds.filter {
            $0.applies(to: request.kind) && !($0 == .response && request.responseDisposition != nil)
        })
        task.checksum = prepared.checksum
        task.segments = request.segments
        task.mirrors = request.mirrors
        task.streamedBody = prepared.streamed?.segments
        if request.request?.body == .stream { task.bodyStream = BodyStreamState() }
        if let resumable = request.resumable {
            // The task's request is the tus creation request.
            task.originalRequest.method = "POST"
            task.resumable = ResumableUpload(protocol: resumable, filename: request.request?.body?.filename)
        }
        if let resume = prepared.resume {
            // The partial file becomes this task's; if it is gone, the download starts over.
            let kept = rename(configuration.dataDirectory + "/" + resume.partialFile, partialPath(of: id)) == 0
            task.resume = kept && resume.state.offset > 0 ? resume.state : nil
        }
        var entry = TaskEntry(task: task, requestBody: prepared.body)
        entry.urlLogin = login
        s.tasks[id] = entry
        return entry
    }
}

/// One task spec after the checks that need no lock, ready to be created.
private struct PreparedTask {
    let spec: TaskCreate
    let resume: ResumeData?
    let body: Data?
    let streamed: StreamedBody?
    let destination: String?
    let conflict: DownloadConflict?
    let checksum: Checksum?
}
