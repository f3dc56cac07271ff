public import FoundationEssentials

/// One daemon as `GET /v1/cluster` lists it: who it is, where it listens, and its load as its
/// last heartbeat reported it.
public struct ClusterNode: Codable, Sendable, Equatable {
    public var id: String
    /// Where it listens (host:port), as it registered.
    public var address: String
    /// When it registered (its start).
    public var startedAt: Date
    /// Seconds since its last heartbeat, by the database's clock.
    public var heartbeatAge: Double
    /// Transfers it runs and tasks it has queued, at its last heartbeat.
    public var running: Int
    public var queued: Int
    public var maxConcurrentTransfers: Int
    /// Tasks it holds leases on (the cluster's claims; 0 until the service claims, docs/cluster.md).
    public var leasedTasks: Int

    package init(id: String, address: String, startedAt: Date, heartbeatAge: Double, running: Int, queued: Int,
                 maxConcurrentTransfers: Int, leasedTasks: Int) {
        self.id = id
        self.address = address
        self.startedAt = startedAt
        self.heartbeatAge = heartbeatAge
        self.running = running
        self.queued = queued
        self.maxConcurrentTransfers = maxConcurrentTransfers
        self.leasedTasks = leasedTasks
    }
}

/// `GET /v1/cluster`: the daemons sharing this one's database, this one among them.
public struct ClusterStatus: Codable, Sendable, Equatable {
    /// Where the state lives: `sqlite` (this daemon alone) or `postgresql`.
    public var database: String
    /// This daemon's id (`--node-id`).
    public var node: String
    /// The nodes heard from within the lease timeout, by id.
    public var nodes: [ClusterNode]

    package init(database: String, node: String, nodes: [ClusterNode]) {
        self.database = database
        self.node = node
        self.nodes = nodes
    }
}

/// A node's load as its heartbeat reports it.
public struct NodeLoad: Sendable, Equatable {
    public var running: Int
    public var queued: Int
    public var maxConcurrentTransfers: Int
    /// The node's `GET /v1/stats` as JSON, which any node adds up with the others' (nil: none).
    public var stats: String?

    public init(running: Int, queued: Int, maxConcurrentTransfers: Int, stats: String? = nil) {
        self.running = running
        self.queued = queued
        self.maxConcurrentTransfers = maxConcurrentTransfers
        self.stats = stats
    }
}
