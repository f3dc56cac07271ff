public import PostgreSQL

/// One daemon per database, until the service runs as a cluster (issue 19, docs/cluster.md).
/// Today a daemon keeps its unfinished tasks in memory as the authority and runs every one it
/// loads: a second daemon on the same database would run the same tasks at once. So a daemon
/// holds a session-level advisory lock on a connection of its own for as long as it runs, and a
/// second one is refused at start with a clear message instead.
///
/// The lock goes with the connection: closed, or dropped by the server or the network. (A
/// dropped connection lets a second daemon start while the first still runs; the cluster's
/// leases, which fence each task's writes, end that window.)
/// - SeeAlso: https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS
struct SoleDaemonLock: Sendable {
    /// The key: a constant of our own, the bytes of "transfd1" (not `ClusterMigrator`'s).
    static let key: Int64 = 0x7472_616E_7366_6431

    /// Held open for the lock; the nodes' heartbeats use it too (`PostgresNodeRegistry`).
    let connection: PostgresConnection

    init(url: String) throws {
        connection = try PostgresConnection(url: url)
        let taken = try connection.run("SELECT pg_try_advisory_lock($1)", Self.key).first?.bool(0) ?? false
        guard taken else {
            connection.close()
            throw DatabaseInUse(database: connection.displayURL)
        }
    }

    func release() { connection.close() }
}

/// Another daemon runs on the database (`SoleDaemonLock`).
package struct DatabaseInUse: Error, CustomStringConvertible {
    let database: String

    package var description: String {
        "another transferd runs on \(database): one daemon per database until the cluster mode (docs/cluster.md) is built"
    }
}
