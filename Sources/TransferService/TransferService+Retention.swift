internal import FoundationEssentials
internal import Glibc
internal import Dispatch
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// Completed tasks do not stay forever: `DELETE /v1/tasks/{tid}` removes one at once, and the
/// retention time removes it later. Either way the record, the response body and the files the
/// task left in the data folder (its downloaded file, a partial file kept for resume data) go;
/// a file moved to a client's `destination` is the client's and stays, unless the DELETE asks
/// for it too (`?deleteFile=true`).
extension TransferService {
    /// DELETE /v1/tasks/{tid}: only a completed task (cancel a running one first), so no
    /// transfer is ever left without its task. `deletingFile` removes its destination's file too.
    public func deleteTask(_ id: Int, owner: String?, deletingFile: Bool = false) throws {
        let removed = try onHeldOrStored(id, owner: owner, held: { try deleteHeld(id, owner: owner) }, stored: { try deleteStored(id, owner: owner) })
        removeFiles(of: removed)
        if deletingFile { removeDestinationFile(of: removed) }
    }

    private func deleteHeld(_ id: Int, owner: String?) throws -> TransferTask {
        let (removed, deliveries) = try state.withLock { s throws -> (TransferTask, Deliveries) in
            guard s.accepting else { throw ServiceError.shuttingDown }
            let entry = try visibleTask(s, id, owner)
            guard entry.task.state == .completed else {
                throw ServiceError.conflict(code: "task_not_completed", message: "task \(id) is \(entry.task.state.rawValue); cancel it, then delete it")
            }
            var deliveries = Deliveries()
            remove(&s, task: id, &deliveries)
            return (entry.task, deliveries)
        }
        // Gone from the store before it is gone from the disk: when the delete is not committed
        // the files stay (the caller removes them after this returns), and the start-up sweep
        // removes them once it is.
        try commit(delivering: deliveries)
        return removed
    }

    /// DELETE of a completed task kept only in the store. The read, the check and the queued
    /// delete happen under the lock, so of two deletes of one task the second finds nothing.
    private func deleteStored(_ id: Int, owner: String?) throws -> TransferTask {
        let (removed, deliveries) = try state.withLock { s throws -> (TransferTask, Deliveries) in
            let task = try storedTaskToChange(s, id, owner: owner)
            var deliveries = Deliveries()
            s.deletingStored.insert(id)
            removeStored(&s, task: task, &deliveries)
            return (task, deliveries)
        }
        defer { forgetDeleting([id]) }
        try commit(delivering: deliveries)
        return removed
    }

    /// Once the deletes are committed the rows are gone, and nothing needs the marks any more.
    /// While commits fail the deletes stay queued and so do the marks (a second DELETE would
    /// otherwise take the task's bytes off its tenant twice); each checkpoint tries again.
    func forgetDeleting(_ ids: [Int]) {
        guard !ids.isEmpty else { return }
        store.afterCommit { [weak self] in
            guard let self, store.failure == nil else { return }
            state.withLock { s in for id in ids { s.deletingStored.remove(id) } }
        }
    }

    /// How many stored tasks one retention sweep deletes at most: a sweep is one transaction
    /// and one read, and the next sweep takes the rest.
    static let expiryBatch = 2_000

    /// Deletes the completed tasks whose retention time has passed: the held ones, and the
    /// oldest stored ones (a query on their completion time).
    func expireTasks(now: Date) {
        guard let retention = configuration.taskRetention else { return }
        let cutoff = now.addingTimeInterval(-retention)
        let stored = (try? store.tasksCompleted(before: cutoff, limit: Self.expiryBatch)) ?? []
        let (expired, deliveries) = state.withLock { s -> ([TransferTask], Deliveries) in
            var deliveries = Deliveries()
            // Fields read in place, and only the few completed tasks still held copied: a copy of
            // every held task (100,000 queued ones) held this lock for tens of milliseconds a sweep.
            // No walk at all while none is held (the table's census says).
            var expired: [TransferTask] = []
            if s.tasks.census.count(where: { $0.state == .completed }) > 0 {
                for id in s.tasks.keys where s.tasks[id]?.task.state == .completed && (s.tasks[id]?.task.completedAt ?? now) < cutoff {
                    if let task = s.tasks[id]?.task { expired.append(task) }
                }
            }
            for task in expired { remove(&s, task: task.id, &deliveries) }
            for task in stored where !s.tasks.contains(task.id) && !s.deletingStored.contains(task.id) {
                s.deletingStored.insert(task.id)
                removeStored(&s, task: task, &deliveries)
                expired.append(task)
            }
            return (expired, deliveries)
        }
        forgetDeleting(stored.map(\.id))
        guard !expired.isEmpty else { return }
        let committed = (try? store.commit()) != nil
        deliveries.run()
        // Files go only once the deletes are committed; otherwise the deletes stay queued and
        // the start-up sweep removes the files of tasks that are gone.
        if committed { for task in expired { removeFiles(of: task) } }
        logger.info("expired completed tasks", metadata: ["tasks": "\(expired.count)", "retention_seconds": "\(retention)"])
    }

    /// How often the retention sweep runs: often enough that a task outlives its retention by
    /// at most a quarter of it (and a minute).
    var retentionSweepInterval: Double? {
        configuration.taskRetention.map { min(60, max(0.25, $0 / 4)) }
    }

    /// Files no task will use: partial files whose task is gone or finished without resume data
    /// that could use them, spooled body streams of finished tasks (a crash between two steps),
    /// and the downloaded files of tasks that are gone (an ephemeral session's, after a
    /// restart). Run at start, before any transfer. The held tasks are the unfinished ones; a
    /// partial file of any other is asked about in the store (few are left), and the downloaded
    /// files, one folder per completed download, are swept on a worker thread, in parts, so a
    /// start does not wait on a walk of every completed download.
    func removeOrphanedPartialFiles() {
        let (partials, spools, held, idsBelow) = state.withLock { s in
            // Fields read in place (a copy of each task retained and released all of its
            // fields: 7% of a start-up with 100,000 unfinished tasks).
            var partials = Set<Int>(), spools = Set<Int>(), held = Set<Int>(minimumCapacity: s.tasks.count)
            for id in s.tasks.keys {
                held.insert(id)
                let unfinished = s.tasks[id]?.task.state != .completed
                if unfinished || s.tasks[id]?.task.error?.resumeData != nil { partials.insert(id) }
                if unfinished && s.tasks[id]?.task.bodyStream != nil { spools.insert(id) }
            }
            return (partials, spools, held, s.nextTaskId)
        }
        removeFiles(in: configuration.dataDirectory + "/partial", suffix: ".part") { ids in
            Set(ids.filter { id in
                if partials.contains(id) { return true }
                if held.contains(id) { return false }
                // A stored task's resume data may need it; a store that cannot be read keeps it.
                // (In a cluster, an unfinished task's: it waits in the queue, or another node runs it.)
                do {
                    guard let task = try self.store.storedTask(id: id)?.task else { return false }
                    return task.state != .completed || task.error?.resumeData != nil
                } catch { return true }
            })
        }
        // (In a cluster the folder is shared, and another node's streamed bodies are not held here.)
        if !isClustered {
            removeFiles(in: configuration.dataDirectory + "/streams", suffix: ".body") { ids in Set(ids.filter(spools.contains)) }
        }
        let files = configuration.dataDirectory + "/files"
        DispatchQueue.global(qos: .utility).async { [weak self] in
            guard let self else { return }
            removeFiles(in: files, suffix: "") { ids in
                // Tasks made after the start are not this sweep's to judge; a store that cannot
                // be read keeps everything.
                let judged = ids.filter { $0 < idsBelow && !held.contains($0) }
                guard let stored = try? self.store.existingTaskIds(among: judged) else { return Set(ids) }
                return Set(ids).subtracting(judged).union(stored)
            }
        }
    }

    /// Deletes the entries `<id><suffix>` of `folder` whose id `keep` does not keep (it gets the
    /// ids a few thousand at a time); with a suffix, strays too.
    private func removeFiles(in folder: String, suffix: String, keep: ([Int]) -> Set<Int>) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        var ids: [(id: Int, name: String)] = []
        for name in names where name.hasSuffix(suffix) {
            // `<id><suffix>`, or a leased partial file's `<id>.<epoch><suffix>` (`LeasedPartials`).
            let stem = name.dropLast(suffix.count)
            if let id = Int(stem) ?? (suffix.isEmpty ? nil : Int(stem.prefix { $0 != "." })) {
                ids.append((id, name))
            } else if !suffix.isEmpty {
                try? FileManager.default.removeItem(atPath: folder + "/" + name)  // a stray
            }  // without a suffix, not ours to judge
        }
        var start = 0
        while start < ids.count {
            let part = ids[start..<min(ids.count, start + 5_000)]
            let kept = keep(part.map(\.id))
            for (id, name) in part where !kept.contains(id) { try? FileManager.default.removeItem(atPath: folder + "/" + name) }
            start += part.count
        }
    }

    /// Forgets a completed task, in memory and (queued) in the store. Held progress polls get
    /// its last state.
    private func remove(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks.removeValue(forKey: id) else { return }
        s.tasksBySession[entry.task.sessionId]?.removeAscending(id)
        s.dirty.remove(id)
        record(s, session: entry.task.sessionId, .deleteTask(id: id))
        noteTaskRemoval(&s, task: entry.task, &deliveries)
        let snapshot = ProgressSnapshot(entry.task)
        for waiter in s.waiters.takeProgress(task: id, below: .max) {
            deliveries.add { waiter.callback(snapshot) }
        }
    }

    /// A deleted download's file at its destination, asked for with the delete. Partitioned as
    /// destinations are (`TenantDownloads`): only a path inside the task's own tenant's downloads
    /// root is removed, whatever `location` says; the link itself if it became one.
    private func removeDestinationFile(of task: TransferTask) {
        guard task.destination != nil, let location = task.location else { return }
        let root = TenantDownloads.root(configuration.downloadsRoot, owner: task.owner)
        guard FileSystem.isInside(FileSystem.parent(of: location), root: root) else { return }
        unlink(location)
    }

    /// The files a removed task left in the data folder.
    private func removeFiles(of task: TransferTask) {
        unlink(partialPath(of: task.id))
        unlink(bodySpoolPath(of: task.id))
        // <data>/files/<id>/ holds only this task's file (a destination is elsewhere).
        try? FileManager.default.removeItem(atPath: configuration.dataDirectory + "/files/\(task.id)")
    }
}
