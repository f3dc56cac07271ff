import Foundation
import Testing
import TestSupport
@testable import ClusterStore
import PostgreSQL

/// Where ephemeral sessions live: a route names a live node other than the asking one, and goes
/// when its node leaves, is forgotten, or registers again.
@Suite struct EphemeralRoutesTests {
    @Test func aRouteNamesItsLiveHolderAndGoesWithIt() throws {
        try ScratchDatabase.migrated { _, db in
            try ClusterNodes.register(id: "a", address: "127.0.0.1:8001", on: db)
            try ClusterNodes.register(id: "b", address: "127.0.0.1:8002", on: db)
            try EphemeralRoutes.route(session: "s1", tasks: [], node: "a", on: db)
            try EphemeralRoutes.route(session: "s1", tasks: [7, 8], node: "a", on: db)
            try EphemeralRoutes.route(session: "s2", tasks: [9], node: "b", on: db)
            try EphemeralRoutes.route(session: "s2", tasks: [9], node: "b", on: db)  // again: idempotent

            #expect(try EphemeralRoutes.holder(session: "s1", task: nil, except: "b", within: 15, on: db) == "127.0.0.1:8001")
            #expect(try EphemeralRoutes.holder(session: nil, task: 8, except: "b", within: 15, on: db) == "127.0.0.1:8001")
            #expect(try EphemeralRoutes.holder(session: nil, task: 9, except: "a", within: 15, on: db) == "127.0.0.1:8002")
            // Never the asking node itself, nor what no one routed.
            #expect(try EphemeralRoutes.holder(session: "s1", task: nil, except: "a", within: 15, on: db) == nil)
            #expect(try EphemeralRoutes.holder(session: nil, task: 10, except: "b", within: 15, on: db) == nil)
            #expect(try EphemeralRoutes.holder(session: "s3", task: nil, except: "b", within: 15, on: db) == nil)

            // A silent node is not asked; once it beats again it is.
            try db.run("UPDATE cluster_nodes SET heartbeat_at = now() - interval '1 minute' WHERE id = 'a'")
            #expect(try EphemeralRoutes.holder(session: "s1", task: nil, except: "b", within: 15, on: db) == nil)
            #expect(try ClusterNodes.heartbeat(id: "a", on: db))
            #expect(try EphemeralRoutes.holder(session: "s1", task: nil, except: "b", within: 15, on: db) == "127.0.0.1:8001")

            // A node that registers again (a restart) holds none of what it held.
            try ClusterNodes.register(id: "a", address: "127.0.0.1:8003", on: db)
            #expect(try EphemeralRoutes.holder(session: nil, task: 7, except: "b", within: 15, on: db) == nil)
            // One that leaves, or is forgotten, takes its routes along.
            try ClusterNodes.leave(id: "b", on: db)
            #expect(try db.run("SELECT count(*) FROM ephemeral_routes").first?.int(0) == 0)
            try EphemeralRoutes.route(session: "s4", tasks: [11], node: "a", on: db)
            try db.run("UPDATE cluster_nodes SET heartbeat_at = now() - interval '1 minute' WHERE id = 'a'")
            #expect(try ClusterNodes.forget(silentFor: 30, on: db) == ["a"])
            #expect(try db.run("SELECT count(*) FROM ephemeral_routes").first?.int(0) == 0)
        }
    }
}
