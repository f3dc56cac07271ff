import ClusterStore
import Foundation
import PostgreSQL
import Synchronization
import TestSupport

/// A database of one test's own on the test PostgreSQL server, dropped by `drop()`: the cluster's
/// tests each start from an empty schema and may run in parallel.
struct ScratchDatabase {
    let name: String
    let url: String

    init() throws {
        let server = try Peers.postgres()
        name = "t_\(UInt32.random(in: 0...UInt32.max))"
        guard let slash = server.lastIndex(of: "/") else { throw URLError(.badURL) }
        url = server[...slash] + name
        let admin = try PostgresConnection(url: server)
        defer { admin.close() }
        try admin.execute(script: "CREATE DATABASE \(name)")
    }

    func connect() throws -> PostgresConnection { try PostgresConnection(url: url) }

    /// Runs `body` with a new database at the cluster schema's newest version and a connection
    /// to it; drops the database after.
    static func migrated(_ body: (ScratchDatabase, PostgresConnection) throws -> Void) throws {
        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let db = try scratch.connect()
        defer { db.close() }
        try ClusterMigrator.migrate(db)
        try body(scratch, db)
    }

    /// Runs `body` on `count` threads at once, each with a connection of its own (a node);
    /// returns what they threw.
    func onNodes(_ count: Int, _ body: @Sendable (Int, PostgresConnection) throws -> Void) -> [String] {
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                let node = try connect()
                defer { node.close() }
                try body(index, node)
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        return failures.withLock { $0 }
    }

    /// Drops the database, closing what is still connected to it.
    func drop() {
        guard let admin = try? PostgresConnection(url: try Peers.postgres()) else { return }
        defer { admin.close() }
        _ = try? admin.execute(script: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}
