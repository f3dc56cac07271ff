internal import Dispatch
internal import FoundationEssentials
internal import Glibc
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// This daemon's place among the daemons that share its store (`GET /v1/cluster`, issue 19).
/// With a store that has a `NodeRegistry` (PostgreSQL) it registers once it listens, beats every
/// third of the lease timeout with its load on the `transferd.cluster` queue (re-registering if
/// the registry forgot it), and leaves when it stops. With the SQLite store it is a cluster of one.
///
/// What it shares with the other nodes is operational only (ids, addresses, counts of transfers):
/// no tenant's data, so nothing here is partitioned by owner; the route is an admin's.
final class ClusterMembership: Sendable {
    private struct Identity: Sendable {
        let id: String
        let address: String
        let startedAt: Date
    }

    private let registry: (any NodeRegistry)?
    private let configuredId: String?
    private let leaseTimeout: Double
    private let logger: Logger
    private let identity = Mutex<Identity?>(nil)
    /// This node's id once it joined; nil before.
    var nodeId: String? { identity.withLock { $0?.id } }

    /// Live nodes at the last heartbeat (`transferd_cluster_nodes`).
    private let liveCount = Atomic<Int>(1)
    /// Whether the last heartbeat failed (logged once per failure run, not every beat).
    private let failing = Atomic<Bool>(false)
    private let timer = HandOffTimer()
    /// Where the heartbeats run, and `leave` after them, so no beat registers the node again
    /// once it left.
    private let queue = DispatchQueue(label: "transferd.cluster")
    private let left = Atomic<Bool>(false)

    init(registry: (any NodeRegistry)?, nodeId: String?, leaseTimeout: Double, logger: Logger) {
        self.registry = registry
        configuredId = nodeId
        self.leaseTimeout = leaseTimeout
        self.logger = logger
    }

    /// Live nodes as the last heartbeat saw them; 1 without a registry.
    var liveNodes: Int { liveCount.load(ordering: .relaxed) }

    /// Takes this daemon's place once it listens on `host:port` (an unspecified host, 0.0.0.0 or
    /// ::, registers as the host's name) as `--node-id`, else `HOSTNAME:PORT` (unique per host and
    /// port, and the same after a restart on them); `load` is read at every heartbeat.
    /// `registered` runs after each registration (the first, and again after the registry forgot
    /// the node), on the heartbeats' queue.
    func join(host: String, port: Int, load: @escaping @Sendable () -> NodeLoad, registered: @escaping @Sendable () -> Void = {}) {
        let id = configuredId ?? "\(Self.hostName()):\(port)"
        let reachable = host == "0.0.0.0" || host == "::" || host.isEmpty ? Self.hostName() : host
        let address = reachable.contains(":") ? "[\(reachable)]:\(port)" : "\(reachable):\(port)"
        identity.withLock { $0 = Identity(id: id, address: address, startedAt: Date()) }
        guard let registry else { return }
        do {
            try registry.register(id: id, address: address)
            queue.async(execute: registered)
        } catch {
            logger.error("cluster registration failed", metadata: ["node": "\(id)", "error": "\(error)"])
        }
        let beat = DispatchSource.makeTimerSource(queue: queue)
        let interval = max(1, leaseTimeout / 3)
        beat.schedule(deadline: .now(), repeating: interval)
        beat.setEventHandler { [weak self] in self?.heartbeat(id: id, address: address, load: load(), registered: registered) }
        beat.resume()
        timer.set(beat)
    }

    private func heartbeat(id: String, address: String, load: NodeLoad, registered: @Sendable () -> Void) {
        guard let registry, !left.load(ordering: .relaxed) else { return }
        do {
            if try !registry.heartbeat(id: id, load: load) {
                logger.warning("the cluster had forgotten this node; registering again", metadata: ["node": "\(id)"])
                try registry.register(id: id, address: address)
                registered()
            }
            liveCount.store(try registry.liveNodes(within: leaseTimeout).count, ordering: .relaxed)
            if failing.exchange(false, ordering: .relaxed) { logger.info("cluster heartbeat works again", metadata: ["node": "\(id)"]) }
        } catch {
            if !failing.exchange(true, ordering: .relaxed) {
                logger.warning("cluster heartbeat failed", metadata: ["node": "\(id)", "error": "\(error)"])
            }
        }
    }

    /// Stops the heartbeat and leaves the registry (before the store closes). Idempotent.
    func leave() {
        guard !left.exchange(true, ordering: .relaxed) else { return }
        // On the heartbeats' queue: a beat running now finishes first, and none follows.
        queue.sync {
            timer.cancel()
            guard let registry, let id = identity.withLock({ $0?.id }) else { return }
            do { try registry.leave(id: id) } catch { logger.warning("leaving the cluster failed", metadata: ["node": "\(id)", "error": "\(error)"]) }
        }
    }

    /// The live nodes: from the registry, or this daemon alone with `load`.
    func status(load: NodeLoad) throws -> ClusterStatus {
        let me = identity.withLock { $0 }
        if let registry {
            return ClusterStatus(database: "postgresql", node: me?.id ?? "", nodes: try registry.liveNodes(within: leaseTimeout))
        }
        guard let me else { return ClusterStatus(database: "sqlite", node: "", nodes: []) }
        return ClusterStatus(database: "sqlite", node: me.id, nodes: [ClusterNode(
            id: me.id, address: me.address, startedAt: me.startedAt, heartbeatAge: 0, running: load.running, queued: load.queued,
            maxConcurrentTransfers: load.maxConcurrentTransfers, leasedTasks: 0)])
    }

    /// The figures the other live nodes sent with their last heartbeat (`NodeLoad.stats`);
    /// none without a registry.
    func otherNodesStats() throws -> [String] {
        guard let registry else { return [] }
        let me = nodeId
        return try registry.liveStats(within: leaseTimeout).filter { $0.key != me }.map(\.value)
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "transferd" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
