public import TransferModel
internal import Synchronization

/// The daemons sharing this one's store (`ClusterMembership`, `GET /v1/cluster`).
extension TransferService {
    /// Registers this daemon once it listens at `host:port` and starts its heartbeat.
    public func joinCluster(host: String, port: Int) {
        membership.join(host: host, port: port) { [weak self] in
            self?.nodeLoad ?? NodeLoad(running: 0, queued: 0, maxConcurrentTransfers: 0)
        }
        // Claims begin once the node has its id (the leases name it).
        if let clusterWork, let id = membership.nodeId { clusterWork.start(node: id, service: self) }
    }

    /// The live nodes with their load. Throws when the store cannot be read.
    public func clusterStatus() throws -> ClusterStatus {
        try membership.status(load: nodeLoad)
    }

    /// What this daemon runs and queues now.
    var nodeLoad: NodeLoad {
        state.withLock { s in
            NodeLoad(running: s.scheduler.runningCount, queued: s.scheduler.queuedCount, maxConcurrentTransfers: s.scheduler.maxConcurrent)
        }
    }
}
