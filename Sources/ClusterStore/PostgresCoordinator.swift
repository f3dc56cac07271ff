internal import FoundationEssentials
public import PostgreSQL
package import TransferModel
package import TransferStore

/// `ClusterCoordinator` on the cluster's database: shared numbers from `counters`, and the
/// queue and leases of `ClusterQueue`. On a connection of its own, so a claim never waits behind
/// the writer's transaction nor a read behind a claim.
///
/// Nothing here is a tenant's: ids, epochs and nodes. The rows a claim hands back are the tasks
/// as stored, each with its owner, and the service holds them to the same checks as any other.
package struct PostgresCoordinator: ClusterCoordinator {
    let database: PostgresConnection

    /// A block from a counter row: one UPDATE, whose row lock makes two nodes' blocks follow
    /// each other. Migration 5 starts each counter above what was handed out before it.
    package func numbers(_ sequence: SharedSequence, count: Int) throws -> Range<Int> {
        let count = max(1, count)
        guard let last = try database.run("""
            UPDATE counters SET value = value + $2 WHERE name = $1 RETURNING value
            """, sequence.rawValue, count).first?.int(0) else {
            throw PostgresError(sqlState: "", message: "no counter \(sequence.rawValue): the schema is older than migration 5", context: "")
        }
        return (last - count + 1)..<(last + 1)
    }

    package func claim(node: String, limit: Int, leaseSeconds: Double) throws -> [ClaimedTask] {
        let leases = try ClusterQueue.claim(node: node, limit: limit, leaseSeconds: leaseSeconds, on: database)
        guard !leases.isEmpty else { return [] }
        let epochs = Dictionary(leases.map { ($0.taskId, $0.epoch) }, uniquingKeysWith: max)
        let rows = try database.run("SELECT id, record, request_body FROM tasks WHERE id = ANY($1::bigint[]) ORDER BY id",
                                    PostgresArrays.integers(leases.map(\.taskId)))
        return try rows.compactMap { row in
            guard let id = row.int(0), let epoch = epochs[id] else { return nil }
            return ClaimedTask(task: try StoredRows.task(from: row.data(1)), requestBody: row.data(2), epoch: epoch)
        }
    }

    package func take(id: Int, node: String, leaseSeconds: Double) throws -> ClaimedTask? {
        guard let row = try database.run("""
            UPDATE tasks SET queued = false, node = $2, lease_epoch = lease_epoch + 1,
                             lease_expires = now() + make_interval(secs => $3)
            WHERE id = $1 AND node IS NULL RETURNING lease_epoch, record, request_body
            """, id, node, leaseSeconds).first, let epoch = row.int(0) else { return nil }
        return ClaimedTask(task: try StoredRows.task(from: row.data(1)), requestBody: row.data(2), epoch: epoch)
    }

    package func renew(node: String, leaseSeconds: Double) throws -> [Int: Int] {
        Dictionary(try ClusterQueue.renew(node: node, leaseSeconds: leaseSeconds, on: database).map { ($0.taskId, $0.epoch) },
                   uniquingKeysWith: max)
    }

    package func requeueExpired() throws -> [Int] {
        try ClusterQueue.requeueExpired(on: database)
    }

    package func requeueAll(of node: String) throws -> [Int] {
        try database.run("""
            UPDATE tasks SET queued = true, node = NULL, lease_expires = NULL WHERE node = $1 RETURNING id
            """, node).compactMap { $0.int(0) }
    }

    package func requeue(ids: [Int], of node: String) throws -> [Int] {
        try database.run("""
            UPDATE tasks SET queued = true, node = NULL, lease_expires = NULL WHERE node = $1 AND id = ANY($2::bigint[])
            RETURNING id
            """, node, PostgresArrays.integers(ids)).compactMap { $0.int(0) }
    }

    package func holder(of id: Int) throws -> String? {
        try database.run("SELECT node FROM tasks WHERE id = $1", id).first?.string(0)
    }

    package func queuedCount() throws -> Int {
        try database.run("SELECT count(*) FROM tasks WHERE queued").first?.int(0) ?? 0
    }

    package func sessions(ids: [String]) throws -> [Session] {
        guard !ids.isEmpty else { return [] }
        return try database.run("SELECT \(StoredRows.sessionColumns) FROM sessions WHERE id = ANY($1::text[]) ORDER BY created",
                                PostgresArrays.texts(ids)).map(StoredRows.session)
    }

    package func tasks(session: String, after: Int, limit: Int) throws -> [StoredTaskJSON] {
        try database.run("""
            SELECT \(StoredRows.servedColumns) FROM tasks WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT $3
            """, session, after, limit).map(StoredRows.served)
    }
}
