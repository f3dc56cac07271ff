import Foundation
import PostgreSQL
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

    /// Drops the database, closing what is still connected to it.
    func drop() {
        guard let admin = try? PostgresConnection(url: try Peers.postgres()) else { return }
        defer { admin.close() }
        _ = try? admin.execute(script: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}
