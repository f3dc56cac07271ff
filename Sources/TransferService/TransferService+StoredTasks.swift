internal import Synchronization
internal import FoundationEssentials
internal import TransferModel
internal import TransferStore

/// Completed tasks live in the store, not in memory (issue 18, "a million tasks"): the service
/// holds what running and queued tasks need, and a completed task of a recorded session leaves
/// memory once its completion (record, body, metrics, events) is committed. From then on every
/// read of it (by id, a session's list, the change feed, delete, retention) goes to the store.
/// An ephemeral session's tasks are never stored, so they stay until their session goes.
///
/// Partitioning: a stored task is served only after the same checks as a held one (its owner
/// and its session's visibility to the requester); the store's feed query reads only the
/// requester's and the anonymous rows.
extension TransferService {
    /// A task `owner` may see: the entry held in memory, or the stored record of a completed
    /// task that left it (entry nil). In a cluster, also the row of a task this node does not
    /// hold (queued, or another node's).
    func visibleRecord(_ id: Int, owner: String?) throws -> (task: TransferTask, entry: TaskEntry?) {
        let held = try state.withLock { s throws -> TaskEntry? in
            s.tasks.contains(id) ? try visibleTask(s, id, owner) : nil
        }
        if let held { return (held.task, held) }
        let stored = try store.storedTask(id: id)?.task
        if let stored { try learnSession(stored.sessionId) }
        return try state.withLock { s throws -> (TransferTask, TaskEntry?) in
            // Taken into memory since the first look (this node claimed it, or a retry was
            // queued here): memory answers, never a 404 for a task that exists.
            if s.tasks.contains(id) {
                let entry = try visibleTask(s, id, owner)
                return (entry.task, entry)
            }
            guard let task = stored, task.state == .completed || isClustered, task.isVisible(to: owner),
                  storedTaskIsVisible(s, id, session: task.sessionId, owner: owner) else {
                throw ServiceError.notFound("no task \(id)")
            }
            return (task, nil)
        }
    }

    /// Under the lock, for a stored completed task `owner` may see by its own owner: whether its
    /// session is `owner`'s to see too, and the task is not held (memory answers for a held one).
    func storedTaskIsVisible(_ s: ServiceState, _ id: Int, session: String, owner: String?) -> Bool {
        !s.tasks.contains(id) && s.sessions[session]?.isVisible(to: owner) == true
    }

    /// Runs `held` for a task held in memory and `stored` for one that left it, including one
    /// that leaves between the look and `held` (which then finds no task).
    func onHeldOrStored<T>(_ id: Int, owner: String?, held: () throws -> T, stored: () throws -> T) throws -> T {
        if try visibleRecord(id, owner: owner).entry == nil { return try stored() }
        do {
            return try held()
        } catch let error as ServiceError {
            guard case .notFound = error, state.withLock({ !$0.tasks.contains(id) }),
                  (try? store.storedTask(id: id)) != nil else { throw error }
            return try stored()
        }
    }

    /// The stored record when the task is not held (it left memory, so it has completed); nil
    /// when it is held, for the caller's own checks under the lock.
    func storedIfLeft(_ id: Int, owner: String?) throws -> TransferTask? {
        let (task, entry) = try visibleRecord(id, owner: owner)
        return entry == nil ? task : nil
    }

    /// Marks a completed task of a recorded session to leave memory once its completion is
    /// committed (`letGoOfCommittedCompletions`, each checkpoint).
    func markLeaving(_ s: inout ServiceState, task id: Int) {
        guard let session = s.tasks[id]?.task.sessionId, isRecorded(s, session: session) else { return }
        s.leaving.insert(id)
    }

    /// Once every write queued so far is committed, lets go of the completed tasks marked to
    /// leave, unless one changed since (its newer write may not be committed yet: next time).
    func letGoOfCommittedCompletions() {
        let marked = state.withLock { s -> [(id: Int, version: Int)] in
            defer { s.leaving.removeAll(keepingCapacity: true) }
            return s.leaving.compactMap { id in s.tasks[id].map { (id, $0.task.version) } }
        }
        guard !marked.isEmpty else { return }
        store.afterCommit { [weak self] in
            guard let self else { return }
            let committed = store.failure == nil
            let deliveries = state.withLock { s in
                var deliveries = Deliveries()
                for (id, version) in marked {
                    guard let entry = s.tasks[id], entry.task.state == .completed || releases(entry) else { continue }
                    if committed, entry.task.version == version, !s.appendingChunks.contains(id) {
                        letGo(&s, task: id, &deliveries)
                    } else {
                        s.leaving.insert(id)
                    }
                }
                return deliveries
            }
            deliveries.run()
        }
    }

    /// Drops a committed completed task from memory; what it counted for (its tenant's bytes,
    /// the completed tasks in /metrics) is now counted as the store's.
    private func letGo(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        // A lease given up: a partial file kept (resume data, a suspended or requeued download)
        // goes back to its unleased name.
        clusterWork?.partials.release(id)
        guard let task = forget(&s, task: id)?.task else { return }
        if task.state == .completed {
            s.storedCompleted[MetricsSnapshot.TaskLabels(state: .completed, phase: .done, kind: task.kind, schedulingClass: task.schedulingClass), default: 0] += 1
        }
        // Nothing will change it any more: a held progress poll gets its last state now.
        let snapshot = ProgressSnapshot(task)
        for waiter in s.waiters.takeProgress(task: id, below: .max) {
            deliveries.add { waiter.callback(snapshot) }
        }
    }

    /// A session's id list keeps the ids of tasks that left memory until they are half of it,
    /// then drops them in one pass: removing each one moved every id after it.
    func noteLeftSession(_ s: inout ServiceState, session: String) {
        let stale = (s.staleSessionIds[session] ?? 0) + 1
        guard let ids = s.tasksBySession[session], stale * 2 > ids.count else {
            s.staleSessionIds[session] = stale
            return
        }
        s.tasksBySession[session] = ids.filter { s.tasks.contains($0) }
        s.staleSessionIds[session] = nil
    }

    /// Forgets a stored completed task that is being deleted (its delete is queued): its
    /// tenant's bytes and the completed count go, and the change feed tells its followers.
    func removeStored(_ s: inout ServiceState, task: TransferTask, _ deliveries: inout Deliveries) {
        record(s, session: task.sessionId, .deleteTask(id: task.id))
        if countsUsageHere(s, task) { s.usage.removeStored(task) }
        let labels = MetricsSnapshot.TaskLabels(state: .completed, phase: .done, kind: task.kind, schedulingClass: task.schedulingClass)
        if let count = s.storedCompleted[labels] { s.storedCompleted[labels] = count > 1 ? count - 1 : nil }
        for waiter in s.taskChanges.remove(task) { deliveries.add(waiter.wake) }
    }

    /// Under the lock, for a change: a stored completed task `owner` may see, that is not held
    /// and whose delete is not queued already.
    func storedTaskToChange(_ s: ServiceState, _ id: Int, owner: String?) throws -> TransferTask {
        guard s.accepting else { throw ServiceError.shuttingDown }
        guard !s.deletingStored.contains(id),
              let task = try store.storedTask(id: id)?.task, task.state == .completed, task.isVisible(to: owner),
              storedTaskIsVisible(s, id, session: task.sessionId, owner: owner) else {
            throw ServiceError.notFound("no task \(id)")
        }
        return task
    }

    /// PATCH of a completed task kept only in the store: its description, priority and limit are
    /// still the client's to set (as URLSessionTask's), written as a new version of its row.
    /// Under the lock, so a delete or another PATCH of the same task cannot interleave.
    func updateStored(task id: Int, _ update: TaskUpdate, owner: String?) throws -> TransferTask {
        let (task, deliveries) = try state.withLock { s throws -> (TransferTask, Deliveries) in
            var task = try storedTaskToChange(s, id, owner: owner)
            if let priority = update.priority { task.priority = priority }
            if let description = update.description { task.description = description }
            if let patch = update.bandwidthLimit {
                let limit = patch.applied(to: task.bandwidthLimit ?? .unlimited)
                task.bandwidthLimit = limit.isUnlimited ? nil : limit
            }
            task.version += 1
            var deliveries = Deliveries()
            let (seq, waiters) = s.taskChanges.stampStored(task)
            for waiter in waiters { deliveries.add(waiter.wake) }
            reserveFeedStamps(&s)
            record(s, session: task.sessionId, .saveTask(task, requestBody: nil, feedSeq: seq))
            return (task, deliveries)
        }
        try commit(delivering: deliveries)
        return task
    }

    /// The change feed's stamps are reserved ahead in the store, so a restart goes on above
    /// every stamp this run handed out, even after kill -9 (`TaskChangeLog.init(after:)`).
    func reserveFeedStamps(_ s: inout ServiceState) {
        guard s.taskChanges.seq + Self.feedStampReserve / 2 > s.feedSeqReserved else { return }
        s.feedSeqReserved = s.taskChanges.seq + Self.feedStampReserve
        store.enqueue(.reserveFeedSeqs(through: s.feedSeqReserved))
    }

    static let feedStampReserve = 1_000_000

    /// How many tasks memory holds (tests: the completed ones leave it).
    var heldTaskCount: Int { state.withLock { $0.tasks.count } }
}
