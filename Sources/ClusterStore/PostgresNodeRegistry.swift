public import PostgreSQL
package import TransferModel
package import TransferStore

/// `NodeRegistry` on the cluster's database (`ClusterNodes`), for `GET /v1/cluster`.
package struct PostgresNodeRegistry: NodeRegistry {
    let database: PostgresConnection
    /// The server-side name of this process's sessions (`PostgresStore.instance`).
    let instance: String

    package func register(id: String, address: String) throws {
        try ClusterNodes.register(id: id, address: address, instance: instance, on: database)
    }

    package func heartbeat(id: String, load: NodeLoad) throws -> Bool { try ClusterNodes.heartbeat(id: id, load: load, on: database) }

    package func leave(id: String) throws { try ClusterNodes.leave(id: id, on: database) }

    package func liveNodes(within seconds: Double) throws -> [ClusterNode] { try ClusterNodes.live(within: seconds, on: database) }

    package func liveStats(within seconds: Double) throws -> [String: String] { try ClusterNodes.stats(within: seconds, on: database) }
}
