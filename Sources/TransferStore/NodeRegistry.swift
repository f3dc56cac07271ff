package import TransferModel

/// Where the daemons that share a store record themselves (issue 19, `GET /v1/cluster`). Only
/// a store several daemons can reach has one (`PostgresStore`); the SQLite store has none, and
/// the service answers for itself alone.
package protocol NodeRegistry: Sendable {
    /// Registers this node (again after a restart).
    func register(id: String, address: String) throws
    /// Records that the node is alive, with its load; false when the registry had forgotten it
    /// (it must register again).
    func heartbeat(id: String, load: NodeLoad) throws -> Bool
    /// Removes the node: it stopped cleanly.
    func leave(id: String) throws
    /// The nodes heard from within `seconds`, by id.
    func liveNodes(within seconds: Double) throws -> [ClusterNode]
    /// The figures the nodes heard from within `seconds` sent with their last heartbeat
    /// (`NodeLoad.stats`), by node id.
    func liveStats(within seconds: Double) throws -> [String: String]
}
