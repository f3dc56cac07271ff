internal import FoundationEssentials
internal import Glibc
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// Completed tasks do not stay forever: `DELETE /v1/tasks/{tid}` removes one at once, and the
/// retention time removes it later. Either way the record, the response body and the files the
/// task left in the data folder (its downloaded file, a partial file kept for resume data) go;
/// a file moved to a client's `destination` is the client's and stays.
extension TransferService {
    /// DELETE /v1/tasks/{tid}: only a completed task (cancel a running one first), so no
    /// transfer is ever left without its task.
    public func deleteTask(_ id: Int, owner: String?) throws {
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
        // the files stay, and the start-up sweep removes them once it is.
        try commit(delivering: deliveries)
        removeFiles(of: removed)
    }

    /// Deletes the completed tasks whose retention time has passed.
    func expireTasks(now: Date) {
        guard let retention = configuration.taskRetention else { return }
        let cutoff = now.addingTimeInterval(-retention)
        let (expired, deliveries) = state.withLock { s -> ([TransferTask], Deliveries) in
            var deliveries = Deliveries()
            let expired = s.tasks.values.map(\.task).filter { $0.state == .completed && ($0.completedAt ?? now) < cutoff }
            for task in expired { remove(&s, task: task.id, &deliveries) }
            return (expired, deliveries)
        }
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
    /// restart). Run at start, before any transfer.
    func removeOrphanedPartialFiles() {
        let (partials, spools, all) = state.withLock { s in
            let tasks = s.tasks.values.map(\.task)
            return (Set(tasks.filter { $0.state != .completed || $0.error?.resumeData != nil }.map(\.id)),
                    Set(tasks.filter { $0.state != .completed && $0.bodyStream != nil }.map(\.id)),
                    Set(s.tasks.keys))
        }
        removeFiles(in: configuration.dataDirectory + "/partial", suffix: ".part", keeping: partials)
        removeFiles(in: configuration.dataDirectory + "/streams", suffix: ".body", keeping: spools)
        removeFiles(in: configuration.dataDirectory + "/files", suffix: "", keeping: all)
    }

    /// Deletes the entries `<id><suffix>` of `folder` whose id is not in `keep`; with a suffix,
    /// strays too.
    private func removeFiles(in folder: String, suffix: String, keeping keep: Set<Int>) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasSuffix(suffix) {
            let id = Int(name.dropLast(suffix.count))
            if let id, keep.contains(id) { continue }
            if id == nil && suffix.isEmpty { continue }  // not ours to judge
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
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

    /// The files a removed task left in the data folder.
    private func removeFiles(of task: TransferTask) {
        unlink(partialPath(of: task.id))
        unlink(bodySpoolPath(of: task.id))
        // <data>/files/<id>/ holds only this task's file (a destination is elsewhere).
        try? FileManager.default.removeItem(atPath: configuration.dataDirectory + "/files/\(task.id)")
    }
}
