internal import FoundationEssentials
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore
internal import TransferEngine

/// The service as one node of a cluster (issue 19, docs/cluster.md, "The service in cluster
/// mode"), when its store has a `ClusterCoordinator` (PostgreSQL):
///
/// - Numbers: task ids and event sequence numbers come in blocks from the store, so no two
///   nodes hand out the same one.
/// - The queue is in the store. A created task is written queued (`TaskPlacement.free`) and
///   leaves memory once committed; nodes take queued tasks with claims (`ClusterWork`) in
///   admission order within cluster-wide caps, and hold each under a lease whose epoch every
///   write of its row names (`TaskPlacement.held`): a node that lost a lease changes nothing.
/// - A node holds in memory the tasks it leases, and runs them with its scheduler and engine as
///   a daemon alone does; a claimed task that another node was running is settled as a restart
///   settles it (`recover`): a background download goes on from its checkpoint.
/// - Leases are renewed every third of the lease timeout; a lease the renewal no longer finds
///   was taken over, and the node stops that transfer and forgets the task. Expired leases go
///   back to the queue.
/// - A completed or suspended task gives its lease up in its write and leaves memory once that
///   is committed. A command on a task no node holds takes its lease, applies the command as
///   here, and gives it back to the queue (or out of it).
///
/// What stays per node: ephemeral sessions (never stored) and tasks that must run where they
/// were made (stream tasks, whose client drives the connection here, and client-streamed
/// bodies), which this node takes at once.
extension TransferService {
    /// Whether tasks go through the store's queue (a store several daemons share).
    var isClustered: Bool { store.coordinator != nil }

    /// How many numbers a node takes from the store at once.
    static let numberBlock = 1_000

    // MARK: numbers

    /// Ids for `count` new tasks, ascending and contiguous: from this node's block, or a new
    /// block when it is short (one round trip per thousand tasks).
    func takeTaskIds(_ s: inout ServiceState, _ count: Int) throws -> Range<Int> {
        if let coordinator = store.coordinator, s.nextTaskId + count > s.taskIdsEnd {
            do {
                let block = try coordinator.numbers(.taskIds, count: max(count, Self.numberBlock))
                (s.nextTaskId, s.taskIdsEnd) = (block.lowerBound, block.upperBound)
            } catch {
                throw StoreReadFailure(reason: "task ids cannot be taken from the store: \(error)")
            }
        }
        let ids = s.nextTaskId..<(s.nextTaskId + count)
        s.nextTaskId = ids.upperBound
        return ids
    }

    /// The next event sequence number. When the store cannot give a block, the node counts on
    /// past its block and says so: an event that then meets another node's is not stored (its
    /// row is skipped), which a store that cannot be reached would not have stored either.
    func takeEventSeq(_ s: inout ServiceState) -> Int {
        if let coordinator = store.coordinator, s.nextEventSeq >= s.eventSeqsEnd {
            do {
                let block = try coordinator.numbers(.eventSeqs, count: Self.numberBlock)
                (s.nextEventSeq, s.eventSeqsEnd) = (block.lowerBound, block.upperBound)
            } catch {
                logger.error("event numbers cannot be taken from the store; counting on", metadata: ["error": "\(error)"])
                s.eventSeqsEnd = s.nextEventSeq + 1
            }
        }
        defer { s.nextEventSeq += 1 }
        return s.nextEventSeq
    }

    // MARK: placement

    /// The store write of a held task's current version, with its place in the cluster.
    func taskWrite(_ s: ServiceState, _ entry: TaskEntry, feedSeq: Int) -> StoreOperation {
        .saveTask(entry.task, requestBody: entry.requestBody, feedSeq: feedSeq, placement: placement(s, entry))
    }

    /// Where a write puts the task's row: nil for a daemon alone.
    func placement(_ s: ServiceState, _ entry: TaskEntry) -> TaskPlacement? {
        guard isClustered else { return nil }
        let task = entry.task
        guard entry.leaseEpoch > 0 else {
            // Made here, not claimed yet: queued for any node, unless it must run here.
            let queued = task.state == .running && !Self.runsWhereMade(task)
            return .free(queue: queued ? queueColumns(s, entry) : nil)
        }
        if entry.commandReturn == .toQueue, task.state == .running, !entry.inEngine {
            return TaskPlacement.held(epoch: Int(entry.leaseEpoch), release: .queued(queueColumns(s, entry)))
        }
        return releases(entry) ? .held(epoch: Int(entry.leaseEpoch), release: .unqueued) : .held(epoch: Int(entry.leaseEpoch))
    }

    /// Whether the task's next write gives its lease up: it completed, it is suspended with no
    /// transfer paused in the engine (a paused one keeps its connection, here), or a command
    /// that brought it here is done with it.
    func releases(_ entry: TaskEntry) -> Bool {
        guard entry.leaseEpoch > 0, !entry.inEngine else { return entry.leaseEpoch > 0 && entry.task.state == .completed }
        return entry.task.state == .completed || entry.task.state == .suspended
            || (entry.commandReturn == .toQueue && entry.task.state == .running)
    }

    /// Tasks whose client is connected to this node: a stream task's connection, a body the
    /// client streams in chunks. They run where they were made.
    static func runsWhereMade(_ task: TransferTask) -> Bool {
        task.kind == .stream || task.bodyStream != nil
    }

    /// What the claim orders and caps the task by: the fields of its scheduler ticket.
    func queueColumns(_ s: ServiceState, _ entry: TaskEntry) -> QueueColumns {
        let configuration = s.sessions[entry.task.sessionId]?.configuration ?? SessionConfiguration()
        return QueueColumns(
            discretionary: configuration.isDiscretionary, classRank: Int(entry.task.schedulingClass.rank),
            priority: entry.task.priority.value,
            host: Scheduler.hostKey(sessionId: entry.task.sessionId, url: entry.task.originalRequest.url),
            hostCap: configuration.httpMaximumConnectionsPerHost, sessionCap: configuration.maximumConcurrentTasks)
    }

    // MARK: claims and leases (on `ClusterWork`'s queue)

    /// How many more tasks this node would start now.
    var claimRoom: Int {
        state.withLock { s in
            s.accepting ? s.scheduler.maxConcurrent - s.scheduler.runningCount - s.scheduler.queuedCount : 0
        }
    }

    /// Takes up to `room` queued tasks for `node`; returns how many it took.
    func claimQueuedTasks(node: String) throws -> Int {
        guard let coordinator = store.coordinator else { return 0 }
        let room = claimRoom
        if room > 0 {
            let claimed = try coordinator.claim(node: node, limit: room, leaseSeconds: configuration.leaseTimeout)
            try adopt(claimed, settle: true)
            return claimed.count
        }
        // Full: earlier classes waiting anywhere in the cluster take the slots of this node's
        // background downloads, as on a daemon alone (admission preempts them once adopted; they
        // wait here, queued with their partial files, for a slot).
        let slots = state.withLock { $0.accepting ? $0.scheduler.preemptibleSlots : 0 }
        guard slots > 0 else { return 0 }
        let claimed = try coordinator.claimForPreemption(node: node, limit: slots, leaseSeconds: configuration.leaseTimeout)
        try adopt(claimed, settle: true)
        return claimed.count
    }

    /// Puts tasks this node now leases in memory: `settle` ones are settled as a restart settles
    /// them (queued ones are scheduled, a download another node was running goes on from its
    /// checkpoint); others wait for the command that took them.
    func adopt(_ claimed: [ClaimedTask], settle: Bool) throws {
        guard !claimed.isEmpty, let coordinator = store.coordinator else { return }
        let unknown = state.withLock { s in Set(claimed.map(\.task.sessionId)).filter { s.sessions[$0] == nil } }
        let sessions = try coordinator.sessions(ids: Array(unknown))
        let deliveries = state.withLock { s in
            var deliveries = Deliveries()
            for session in sessions { know(&s, session) }
            for claim in claimed {
                let id = claim.task.id
                if let epoch = s.tasks[id]?.leaseEpoch, epoch > 0 {
                    // A copy from an earlier lease that has not left yet (a command here gave it
                    // back, or a fenced write ended it here): the row is the task.
                    forget(&s, task: id)
                }
                if s.tasks[id] != nil {
                    // Still here from its creation (its claim came before it left memory), as
                    // stored: it stays, under the lease.
                    s.tasks[id]?.leaseEpoch = Int32(clamping: claim.epoch)
                    clusterWork?.partials.takeOver(id, epoch: Int32(clamping: claim.epoch))
                    s.tasks[id]?.commandReturn = .no
                    s.leaving.remove(id)
                    if settle, s.tasks[id]?.inEngine == false, !s.scheduler.isQueued(id), s.holds.hold(of: id) == nil {
                        schedule(&s, task: id, &deliveries)
                    }
                    continue
                }
                guard s.sessions[claim.task.sessionId] != nil else {
                    logger.error("a claimed task's session is not in the store", metadata: ["task": "\(id)", "session": "\(claim.task.sessionId)"])
                    continue
                }
                hold(&s, stored: claim.task, requestBody: claim.requestBody)
                s.tasks[id]?.leaseEpoch = Int32(clamping: claim.epoch)
                clusterWork?.partials.takeOver(id, epoch: Int32(clamping: claim.epoch))
                if settle { recover(&s, task: id, &deliveries) }
            }
            admit(&s, &deliveries)
            return deliveries
        }
        deliveries.run()
    }

    /// Renews this node's leases; stops and forgets the tasks whose lease another node took
    /// (their rows are its now: nothing of theirs is written or announced from here). Returns
    /// how many were lost.
    func renewLeases(node: String) throws -> Int {
        guard let coordinator = store.coordinator else { return 0 }
        let held = try coordinator.renew(node: node, leaseSeconds: configuration.leaseTimeout)
        // A lease this node holds for a task it does not have in memory would be renewed for
        // ever and the task never run: it goes back to the queue. (None is expected; this keeps a
        // slip from stranding a task.)
        let stranded = state.withLock { s in held.keys.filter { !s.tasks.contains($0) } }
        if !stranded.isEmpty {
            logger.warning("leases held for tasks not in memory go back to the queue", metadata: ["tasks": "\(stranded.sorted())"])
            _ = try coordinator.requeue(ids: stranded, of: node)
        }
        return state.withLock { s in
            let lost = s.tasks.keys.filter { id in
                guard let epoch = s.tasks[id]?.leaseEpoch, epoch > 0 else { return false }
                return held[id] != Int(epoch)
            }
            for id in lost {
                logger.warning("lost the lease of a task to another node; stopping it here", metadata: ["task": "\(id)"])
                if s.tasks[id]?.inEngine == true { engine.submit(.preempt(taskId: id)) }
                s.scheduler.remove(taskId: id)
                _ = s.holds.remove(task: id)
                forget(&s, task: id)
            }
            var deliveries = Deliveries()
            admit(&s, &deliveries)
            return lost.count
        }
    }

    /// Drops a task from memory without a write (its row is the store's: completed and
    /// committed, the queue's, or another node's); returns the entry. Its partial file, if it
    /// had a lease's, is left where it is (the next holder takes it over).
    @discardableResult
    func forget(_ s: inout ServiceState, task id: Int) -> TaskEntry? {
        clusterWork?.partials.forget(id)
        guard let entry = s.tasks.removeValue(forKey: id) else { return nil }
        s.dirty.remove(id)
        s.leaving.remove(id)
        s.taskChanges.forget(id)
        s.usage.forget(id)
        noteLeftSession(&s, session: entry.task.sessionId)
        return entry
    }

    // MARK: sessions made on other nodes

    /// In a cluster, puts session `id` in memory when another node made it (read from the
    /// store); a session unknown to the store stays unknown (the caller answers 404).
    func learnSession(_ id: String) throws {
        guard let coordinator = store.coordinator, state.withLock({ $0.sessions[id] == nil }) else { return }
        let sessions = try coordinator.sessions(ids: [id])
        state.withLock { s in for session in sessions { know(&s, session) } }
    }

    // MARK: commands on a task no node holds

    /// Where a command on a task runs.
    enum CommandPlace: Equatable {
        /// Here: the task is in this node's memory (or left it completed, or is not visible).
        case here
        /// On the node that holds the task's lease.
        case elsewhere(String)
    }

    /// Before a command on task `id` in a cluster: when no node holds it (queued, suspended, or
    /// its holder's lease expired and was requeued), this node takes its lease and puts it in
    /// memory, where the command then runs as on any held task; its next write gives it back
    /// (`returnAfterCommand`). A task another node holds is that node's to change.
    func holdForCommand(_ id: Int, owner: String?) throws -> CommandPlace {
        guard let coordinator = store.coordinator, let work = clusterWork,
              state.withLock({ !$0.tasks.contains(id) }) else { return .here }
        guard let stored = try store.storedTask(id: id)?.task, stored.isVisible(to: owner), stored.state != .completed else { return .here }
        return try work.onQueue { node -> CommandPlace in
            // A take fails when another node claimed the task between the two statements: it is
            // that node's now, so look again (a few times: it may be given back just as fast).
            for _ in 0..<3 {
                if let holder = try coordinator.holder(of: id), holder != node { return .elsewhere(holder) }
                if let taken = try coordinator.take(id: id, node: node, leaseSeconds: configuration.leaseTimeout) {
                    try adopt([taken], settle: false)
                    state.withLock { s in s.tasks[id]?.commandReturn = .pending }
                    return .here
                }
            }
            // Gone, or held by this node already: the command's own checks answer for it here.
            return .here
        }
    }

    /// After a command on a task it brought here: gives a task that still runs back to the
    /// queue, unless the command started it here (then it stays, held like a claimed one). A
    /// completed or suspended one gave its lease up in the command's own write.
    func returnAfterCommand(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], entry.commandReturn == .pending else { return }
        guard entry.task.state == .running, !entry.inEngine else {
            s.tasks[id]?.commandReturn = .no
            return
        }
        s.scheduler.remove(taskId: id)
        _ = s.holds.remove(task: id)
        s.tasks[id]?.commandReturn = .toQueue
        changed(&s, task: id, persist: true, &deliveries)
        clusterWork?.nudge()
    }
}
