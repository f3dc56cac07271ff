import Foundation
import Synchronization
import Testing
import TestSupport
@testable import ClusterStore
import PostgreSQL

/// The cluster's SQL core against the real server (docs/cluster.md): migrations that nodes
/// starting together apply once, claims in admission order that never overlap, caps that hold
/// across nodes claiming at once, and fencing of a node whose lease was taken over.
@Suite struct ClusterQueueTests {
    @Test func nodesStartingTogetherApplyEachMigrationOnce() throws {
        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let applied = Mutex<[[Int]]>([])
        let failures = scratch.onNodes(4) { _, db in
            let done = try ClusterMigrator.migrate(db)
            applied.withLock { $0.append(done) }
        }
        #expect(failures.isEmpty, "\(failures)")
        let all = applied.withLock { $0 }
        #expect(all.count == 4)
        #expect(all.filter { !$0.isEmpty } == [Array(1...ClusterMigrator.latestVersion)], "\(all)")
        let db = try scratch.connect()
        defer { db.close() }
        #expect(try db.run("SELECT count(*) FROM schema_migrations").first?.int(0) == ClusterMigrator.latestVersion)
        #expect(try ClusterMigrator.migrate(db).isEmpty)
    }

    /// Class first, then higher priority, then arrival, discretionary last; two nodes never
    /// get the same task, claiming one after the other or at once.
    @Test func claimsFollowAdmissionOrderAndNeverOverlap() throws {
        try ScratchDatabase.migrated { scratch, db in
            // id: (class rank, priority, discretionary); each on a host of its own.
            let specs: [(Int, Double, Bool)] = [(2, 0.5, false), (3, 0.9, false), (0, 0.1, false), (2, 0.9, false),
                                                (1, 0.5, true), (2, 0.5, false), (0, 0.7, false), (3, 0.2, false)]
            for (index, spec) in specs.enumerated() {
                var row = QueuedTaskRow(id: index + 1, sessionId: "s", host: "h\(index + 1)")
                (row.classRank, row.priority, row.discretionary) = spec
                try ClusterQueue.enqueue(row, on: db)
            }
            let first = try ClusterQueue.claim(node: "a", limit: 3, leaseSeconds: 30, on: db)
            let second = try ClusterQueue.claim(node: "b", limit: 10, leaseSeconds: 30, on: db)
            #expect(first.map(\.taskId) == [7, 3, 4])
            #expect(second.map(\.taskId) == [1, 6, 2, 8, 5])
            #expect((first + second).allSatisfy { $0.epoch == 1 })
            #expect(try ClusterQueue.claim(node: "a", limit: 5, leaseSeconds: 30, on: db).isEmpty)

            // Many at once: 200 tasks, four nodes claiming a few at a time until none is left.
            for id in 101...300 { try ClusterQueue.enqueue(QueuedTaskRow(id: id, sessionId: "s", host: "host\(id)"), on: db) }
            let claimed = Mutex<[String: [Int]]>([:])
            let failures = scratch.onNodes(4) { index, node in
                while true {
                    let leases = try ClusterQueue.claim(node: "n\(index)", limit: 7, leaseSeconds: 30, on: node)
                    if leases.isEmpty { break }
                    claimed.withLock { $0["n\(index)", default: []] += leases.map(\.taskId) }
                }
            }
            #expect(failures.isEmpty, "\(failures)")
            let ids = claimed.withLock { $0.values.flatMap { $0 } }
            #expect(ids.count == 200 && Set(ids) == Set(101...300))
            #expect(try db.run("SELECT count(*) FROM tasks WHERE queued").first?.int(0) == 0)
        }
    }

    /// Sixty tasks for one host whose cap is 4, and three nodes claiming at once: the host never
    /// has more than 4 leased, and a task for another host queued behind them is still reached;
    /// a session's cap holds the same way.
    @Test func theHostCapHoldsAcrossNodesClaimingAtOnce() throws {
        try ScratchDatabase.migrated { scratch, db in
            for id in 1...60 {
                var row = QueuedTaskRow(id: id, sessionId: "s", host: "slow.example")
                row.hostCap = 4
                try ClusterQueue.enqueue(row, on: db)
            }
            try ClusterQueue.enqueue(QueuedTaskRow(id: 61, sessionId: "s", host: "other.example"), on: db)

            let claimed = Mutex<[TaskLease]>([])
            let failures = scratch.onNodes(3) { index, node in
                for _ in 0..<5 {
                    let leases = try ClusterQueue.claim(node: "n\(index)", limit: 3, leaseSeconds: 30, on: node)
                    claimed.withLock { $0 += leases }
                }
            }
            #expect(failures.isEmpty, "\(failures)")
            let leases = claimed.withLock { $0 }
            #expect(leases.filter { $0.taskId <= 60 }.count == 4, "\(leases)")
            #expect(leases.contains { $0.taskId == 61 }, "\(leases)")
            #expect(try db.run("SELECT count(*) FROM tasks WHERE host = 'slow.example' AND node IS NOT NULL").first?.int(0) == 4)

            // A session's cap: of its two tasks (other hosts, queued behind the full host's) one runs.
            for id in [62, 63] {
                var row = QueuedTaskRow(id: id, sessionId: "capped", host: "h\(id)")
                row.sessionCap = 1
                try ClusterQueue.enqueue(row, on: db)
            }
            #expect(try ClusterQueue.claim(node: "n8", limit: 10, leaseSeconds: 30, on: db).map(\.taskId) == [62])

            // One slot frees: exactly one more of the host's tasks is claimed, the first queued.
            // (Which four ran first depends on which node took the host's lock first: a claim locks
            // as many candidates as it wants, and the others skip those.)
            let done = try #require(leases.first { $0.taskId <= 60 })
            let holder = try #require(try db.run("SELECT node FROM tasks WHERE id = $1", done.taskId).first?.string(0))
            #expect(try ClusterQueue.release(done, node: holder, requeue: false, on: db))
            let first = try #require(try db.run("SELECT min(id) FROM tasks WHERE queued AND host = 'slow.example'").first?.int(0))
            let next = try ClusterQueue.claim(node: "n9", limit: 10, leaseSeconds: 30, on: db)
            #expect(next.map(\.taskId) == [first])
        }
    }

    /// A node that stops renewing (SIGSTOP, a lost network) loses its task to another node once
    /// the lease expires; its late writes are refused by the epoch and change nothing.
    @Test func aNodeThatLostItsLeaseCannotWrite() throws {
        try ScratchDatabase.migrated { scratch, db in
            try ClusterQueue.enqueue(QueuedTaskRow(id: 1, sessionId: "s", host: "h"), on: db)
            let old = try #require(try ClusterQueue.claim(node: "a", limit: 1, leaseSeconds: 2, on: db).first)
            #expect(try ClusterQueue.update(old, node: "a", state: "running", record: "{\"offset\":100}", version: 2, on: db))
            #expect(try ClusterQueue.requeueExpired(on: db).isEmpty)  // not expired yet

            var expired: [Int] = []
            let deadline = Date().addingTimeInterval(10)
            while expired.isEmpty && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.1)
                expired = try ClusterQueue.requeueExpired(on: db)
            }
            #expect(expired == [1])
            let new = try #require(try ClusterQueue.claim(node: "b", limit: 1, leaseSeconds: 30, on: db).first)
            #expect(new == TaskLease(taskId: 1, epoch: old.epoch + 1))

            // The old holder wakes up: its write, its renewal and its release all find nothing.
            #expect(try !ClusterQueue.update(old, node: "a", state: "running", record: "{\"offset\":999}", version: 3, on: db))
            #expect(try ClusterQueue.renew(node: "a", leaseSeconds: 30, on: db).isEmpty)
            #expect(try !ClusterQueue.release(old, node: "a", requeue: true, on: db))
            #expect(try db.run("SELECT record, version, node FROM tasks WHERE id = 1").first?.values
                    == [.text("{\"offset\":100}"), .integer(2), .text("b")])
            // The new holder writes and renews.
            #expect(try ClusterQueue.update(new, node: "b", state: "running", record: "{\"offset\":200}", version: 3, on: db))
            #expect(try ClusterQueue.renew(node: "b", leaseSeconds: 30, on: db) == [new])
        }
    }

    /// A node frozen inside a transaction that wrote one of its task rows: another node's
    /// requeue does not wait for it (it would wait as long as the node stays frozen), takes the
    /// other expired rows, and takes that one once the transaction is gone.
    @Test func aRequeueSkipsTheRowsAFrozenNodeHoldsInsteadOfWaiting() throws {
        try ScratchDatabase.migrated { scratch, db in
            for id in 1...2 { try ClusterQueue.enqueue(QueuedTaskRow(id: id, sessionId: "s", host: "h"), on: db) }
            #expect(try ClusterQueue.claim(node: "a", limit: 2, leaseSeconds: 1, on: db).count == 2)
            let frozen = try scratch.connect()
            // A statement timeout turns a wait into a failure the test sees.
            let other = try PostgresConnection(url: scratch.url, setup: "SET statement_timeout = 5000")
            defer { frozen.close(); other.close() }
            try frozen.execute(script: "BEGIN; UPDATE tasks SET version = version + 1 WHERE id = 1")
            Thread.sleep(forTimeInterval: 1.2)  // the leases expire
            #expect(try ClusterQueue.requeueExpired(on: other) == [2])
            try frozen.execute(script: "ROLLBACK")
            #expect(try ClusterQueue.requeueExpired(on: other) == [1])
        }
    }

    @Test func textArraysAreQuotedForAnyName() {
        #expect(ClusterQueue.textArray([String]()) == "{}")
        #expect(ClusterQueue.textArray(["b", "a\"x", "c\\d"]) == "{\"a\\\"x\",\"b\",\"c\\\\d\"}")
    }
}
