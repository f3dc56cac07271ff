import Foundation
import Logging
import Testing
import TestSupport
@testable import ClusterStore
import PostgreSQL
import TransferModel
import TransferStore

/// The nodes' registry: registration, heartbeats, the live list with each node's load, and a
/// silent node left out and then forgotten.
@Suite struct ClusterNodesTests {
    @Test func liveNodesAreThoseHeardFromWithTheirLoad() throws {
        try ScratchDatabase.migrated { scratch, db in
            for (index, node) in ["a", "b", "c"].enumerated() {
                try ClusterNodes.register(id: node, address: "127.0.0.1:\(8080 + index)", on: db)
            }
            for id in 1...5 { try ClusterQueue.enqueue(QueuedTaskRow(id: id, sessionId: "s", host: "h\(id)"), on: db) }
            _ = try ClusterQueue.claim(node: "a", limit: 3, leaseSeconds: 30, on: db)
            _ = try ClusterQueue.claim(node: "b", limit: 1, leaseSeconds: 30, on: db)

            var live = try ClusterNodes.live(within: 15, on: db)
            #expect(live.map(\.id) == ["a", "b", "c"])
            #expect(live.map(\.leasedTasks) == [3, 1, 0])
            #expect(live.map(\.address) == ["127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082"])
            #expect(live.allSatisfy { $0.heartbeatAge >= 0 && $0.heartbeatAge < 15 && $0.startedAt.timeIntervalSince1970 > 1_700_000_000 })

            // c stops beating: it is no longer live, then forgotten; its next heartbeat says so.
            try db.run("UPDATE cluster_nodes SET heartbeat_at = now() - interval '1 minute' WHERE id = 'c'")
            #expect(try ClusterNodes.heartbeat(id: "a", on: db))
            live = try ClusterNodes.live(within: 15, on: db)
            #expect(live.map(\.id) == ["a", "b"])
            #expect(try ClusterNodes.forget(silentFor: 30, on: db) == ["c"])
            #expect(try !ClusterNodes.heartbeat(id: "c", on: db))
            try ClusterNodes.register(id: "c", address: "127.0.0.1:9000", on: db)
            #expect(try ClusterNodes.live(within: 15, on: db).map(\.address) == ["127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:9000"])

            // A heartbeat carries the node's load; a node that stops cleanly leaves at once.
            #expect(try ClusterNodes.heartbeat(id: "b", load: NodeLoad(running: 7, queued: 40, maxConcurrentTransfers: 16), on: db))
            let b = try ClusterNodes.live(within: 15, on: db).first { $0.id == "b" }
            #expect(b.map { [$0.running, $0.queued, $0.maxConcurrentTransfers, $0.leasedTasks] } == [7, 40, 16, 1])
            try ClusterNodes.leave(id: "b", on: db)
            #expect(try ClusterNodes.live(within: 15, on: db).map(\.id) == ["a", "c"])
        }
    }

    /// A node frozen outside a transaction keeps its sessions and what they hold: here a tenant's
    /// creation turn (a session-level advisory lock). Once it is silent past the lease timeout,
    /// another node ends its sessions, and only its: the turn is free; the frozen node, when it
    /// wakes, connects again under the same name.
    @Test func aSilentNodesSessionsAreEndedAndWhatTheyHeldIsFreed() throws {
        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let frozen = try PostgresStore(url: scratch.url, instruments: nil, logger: Logger(label: "test"))
        let other = try PostgresStore(url: scratch.url, instruments: nil, logger: Logger(label: "test"))
        let probe = try scratch.connect()
        defer { frozen.close(); other.close(); probe.close() }
        #expect(frozen.instance != other.instance)
        try frozen.nodeRegistry?.register(id: "frozen", address: "127.0.0.1:1")
        try other.nodeRegistry?.register(id: "other", address: "127.0.0.1:2")
        let sessions = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"
        let frozenSessions = try probe.run(sessions, frozen.instance).first?.int(0) ?? 0
        #expect(frozenSessions == PostgresStore.readConnections + 3)

        try frozen.coordinator?.beginTenantCreations(owner: "tenant")
        let tryTurn = "SELECT pg_try_advisory_lock($1::int4, hashtext('tenant'))"
        #expect(try probe.run(tryTurn, Int(PostgresCoordinator.creationTurns)).first?.bool(0) == false)
        // Live: nothing is ended. (An hour, not the lease timeout: on a loaded machine the steps
        // above have taken more than 15 s.)
        #expect(try other.coordinator?.endSessions(ofNodesSilentFor: 3600) == 0)

        try probe.run("UPDATE cluster_nodes SET heartbeat_at = now() - interval '1 minute' WHERE id = 'frozen'")
        #expect(try other.coordinator?.endSessions(ofNodesSilentFor: 15) == frozenSessions)
        // The turn is free once the ended sessions are gone (a backend ends soon after its signal).
        var free = false
        let deadline = Date().addingTimeInterval(10)
        while !free && Date() < deadline {
            free = try probe.run(tryTurn, Int(PostgresCoordinator.creationTurns)).first?.bool(0) == true
            if !free { usleep(20_000) }
        }
        #expect(free)
        // None of its own. (A second round may end the frozen node's listener again, if it has
        // connected anew meanwhile: that is right, so it is not asserted either way.)
        #expect(try probe.run(sessions, other.instance).first?.int(0) == PostgresStore.readConnections + 3)

        // The frozen node wakes: a statement fails on the ended session, the next connects again,
        // named as before.
        _ = try? frozen.database.run("SELECT 1")
        #expect(try frozen.database.run("SELECT current_setting('application_name')").first?.string(0) == frozen.instance)
    }
}
