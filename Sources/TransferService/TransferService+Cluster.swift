public import TransferModel
internal import Synchronization
internal import TransferStore

/// The daemons sharing this one's store (`ClusterMembership`, `GET /v1/cluster`).
extension TransferService {
    /// Registers this daemon once it listens at `host:port` and starts its heartbeat.
    public func joinCluster(host: String, port: Int) {
        membership.join(host: host, port: port, load: { [weak self] in
            self?.nodeLoad ?? NodeLoad(running: 0, queued: 0, maxConcurrentTransfers: 0)
        }, registered: { [weak self] in self?.routeEveryEphemeral() })
        // Claims begin once the node has its id (the leases name it).
        if let clusterWork, let id = membership.nodeId { clusterWork.start(node: id, service: self) }
    }

    /// In a cluster, the node that runs `task` now (holds its lease): this one for a task in
    /// its memory under a lease or of an ephemeral session (which never leaves it), else the
    /// store's; nil when none does, and for a daemon alone.
    public func node(running task: ServedTask) throws -> String? {
        guard let coordinator = store.coordinator, task.state != .completed else { return nil }
        let here = state.withLock { s in
            (s.tasks[task.id]?.leaseEpoch ?? 0) > 0 || (s.tasks[task.id] != nil && s.sessions[task.sessionId]?.kind == .ephemeral)
        }
        if here { return membership.nodeId }
        do {
            return try coordinator.holder(of: task.id)
        } catch {
            throw StoreReadFailure(reason: "the task's node cannot be read: \(error)")
        }
    }

    /// The live nodes with their load. Throws when the store cannot be read.
    public func clusterStatus() throws -> ClusterStatus {
        try membership.status(load: nodeLoad)
    }
}
