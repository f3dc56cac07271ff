import Foundation
import Logging
import PostgreSQL
import Synchronization
import TestSupport
import Testing
@testable import ClusterStore
@testable import TransferEngine
@testable import TransferModel
@testable import TransferStore
@testable import TransferService

/// The service as nodes of a cluster (docs/cluster.md, "The service in cluster mode"): several
/// `TransferService`s on one PostgreSQL database and one data folder, each with a fake engine
/// (what runs where is the question here, not libcurl), on the test PostgreSQL server.
@Suite("Nodes of a cluster")
struct ClusterServiceTests {
    @Test("tasks made on one node run once across the cluster, within the session's per-host cap")
    func tasksRunOnceWithinTheClusterCap() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 4)
        defer { cluster.stop() }
        let maker = cluster.nodes[0].service
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = 2
        let session = try maker.createSession(SessionCreate(configuration: configuration), owner: nil).session.id
        let created = try maker.createTasks(in: session, (0..<6).map { index in
            TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/file\(index)"))
        }, owner: nil)
        let ids = Set(created.map(\.id))
        #expect(ids.count == 6)

        try await cluster.waitUntil("two tasks run") { cluster.running.count == 2 }
        // Both nodes' claim rounds (every half second) pass: the cap holds across them.
        try await Task.sleep(for: .seconds(1.5))
        #expect(cluster.running.count == 2, "the per-host cap of 2 was passed across the nodes: \(cluster.running)")

        var done = Set<Int>()
        while done.count < ids.count {
            try await cluster.waitUntil("a task to finish runs") { !cluster.running.subtracting(done).isEmpty }
            #expect(cluster.running.count <= 2)
            for node in cluster.nodes {
                for id in node.engine.startedIds where node.engine.isRunning(id) && !done.contains(id) {
                    node.engine.succeed(id, body: Data("body \(id)".utf8))
                    done.insert(id)
                }
            }
        }
        let starts = cluster.nodes.flatMap(\.engine.startedIds)
        #expect(starts.sorted() == ids.sorted(), "each task starts once, on one node")
        try await cluster.waitUntil("every row completed and given back") {
            let rows = try cluster.rows()
            return rows.count == 6 && rows.values.allSatisfy { $0.state == "completed" && $0.node == nil && !$0.queued }
        }
        // Any node serves any task, from memory or from the store.
        for id in ids {
            #expect(try cluster.nodes[1].service.task(id, owner: nil).state == .completed)
        }
    }

    @Test("a node whose lease another node took stops the task, and its late writes change nothing")
    func aLostLeaseFencesTheFormerHolder() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 4, joined: 1)
        defer { cluster.stop() }
        let (first, second) = (cluster.nodes[0], cluster.nodes[1])
        let session = try first.service.createSession(SessionCreate(configuration: SessionConfiguration()), owner: nil).session.id
        let id = try first.service.createTask(in: session, TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/a")), owner: nil).id
        _ = try await first.engine.waitForStart(of: id)
        try await cluster.waitUntil("its start is stored") { try cluster.rows()[id]?.started == true }
        #expect(try cluster.rows()[id]?.node == "node0")

        // Another node took the task over (the first stopped renewing: a partition, a SIGSTOP),
        // as a claim makes it: its node, the next epoch.
        try cluster.database.run("""
            UPDATE tasks SET node = 'node1', lease_epoch = 2, lease_expires = now() + interval '60 seconds' WHERE id = $1
            """, id)

        // The first node's transfer ends late: its completion is not written over the new lease.
        first.engine.succeed(id, body: Data("stale".utf8))
        try first.service.store.commit()
        let after = try #require(try cluster.rows()[id])
        #expect(after.node == "node1" && after.state == "running" && after.epoch == 2, "a late write passed the fence: \(after)")
        // And it lets go of the task (its renewal finds the lease gone, or its fenced completion leaves).
        try await cluster.waitUntil("the first node lets go of the task") { first.service.heldTaskCount == 0 }

        // The lease expires unrenewed and goes back to the queue; a node claims it and settles
        // it as a restart settles it, by what its row says: queued again (run again, to its
        // end, on one node) or, once it had reached the network, ended with
        // networkConnectionLost. Never with the late node's body.
        try cluster.database.run("UPDATE tasks SET lease_expires = now() - interval '1 second' WHERE id = $1", id)
        // (The first node's own lease round may requeue it first: either puts it back.)
        _ = try ClusterQueue.requeueExpired(on: cluster.database)
        cluster.join(1)
        try await cluster.waitUntil("the task is settled") {
            try cluster.rows()[id]?.state == "completed" || cluster.running.contains(id)
        }
        #expect(try cluster.rows()[id]?.epoch == 3)
        if let runner = cluster.nodes.first(where: { $0.engine.isRunning(id) }) {
            runner.engine.succeed(id, body: Data("fresh".utf8))
            try await cluster.waitUntil("the completion is stored") { try cluster.rows()[id]?.state == "completed" }
            #expect(try second.service.body(task: id, owner: nil).body == Data("fresh".utf8))
        } else {
            let settled = try second.service.task(id, owner: nil)
            #expect(settled.error?.code == URLErrorCode.networkConnectionLost.rawValue, "\(String(describing: settled.error))")
        }
        #expect(cluster.nodes.flatMap(\.engine.startedIds).count <= 2, "one start per lease at most")
    }

    @Test("a task is never 404 through the node that takes it into memory while it is being read")
    func aTaskBeingClaimedIsReadWithoutA404() async throws {
        // The read looks in memory, then at the row: a claim between the two used to answer
        // 404 for a task that exists (test_cluster's kill test saw it in CI).
        let cluster = try Cluster(nodes: 2, maxConcurrent: 8, joined: 0)
        defer { cluster.stop() }
        let (maker, reader) = (cluster.nodes[0], cluster.nodes[1])
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = 8
        let session = try maker.service.createSession(SessionCreate(configuration: configuration), owner: nil).session.id
        let ids = try maker.service.createTasks(in: session, (0..<64).map { index in
            TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/read\(index)"))
        }, owner: nil).map(\.id)

        final class Reads: Sendable {
            let failures = Mutex<[String]>([])
            let count = Atomic<Int>(0)
            let stop = Atomic<Bool>(false)
        }
        let reads = Reads()
        let service = reader.service
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while !reads.stop.load(ordering: .acquiring) {
                for id in ids {
                    do {
                        _ = try service.task(id, owner: nil)
                        _ = try service.servedTask(id, owner: nil)
                    } catch {
                        reads.failures.withLock { $0.append("task \(id): \(error)") }
                    }
                    reads.count.add(1, ordering: .relaxed)
                }
            }
            done.signal()
        }
        cluster.join(1)
        var finished = Set<Int>()
        try await cluster.waitUntil("the reading node runs every task", timeout: 60) {
            for id in reader.engine.startedIds where reader.engine.isRunning(id) && !finished.contains(id) {
                reader.engine.succeed(id)
                finished.insert(id)
            }
            return finished.count == ids.count
        }
        reads.stop.store(true, ordering: .releasing)
        done.wait()
        #expect(reads.count.load(ordering: .relaxed) >= ids.count)
        let failures = reads.failures.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) reads failed, first: \(failures.prefix(3))")
    }

    @Test("a session made through one node is in every node's list at once, and a list keeps to its kind")
    func aSessionMadeThroughOneNodeIsListedThroughAny() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 1)
        defer { cluster.stop() }
        let (maker, lister) = (cluster.nodes[0].service, cluster.nodes[1].service)
        _ = try lister.listSessions(owner: nil, limit: 1000, cursor: nil)  // it has listed before
        var ids: [String] = []
        for _ in 0..<3 {
            ids.append(try maker.createSession(SessionCreate(configuration: SessionConfiguration()), owner: nil).session.id)
        }
        let listed = try lister.listSessions(owner: nil, limit: 1000, cursor: nil).items.map(\.id)
        #expect(ids.allSatisfy(listed.contains), "listed through the other node: \(listed), made: \(ids)")
        // Paged, in the same order.
        var paged: [String] = []
        var cursor: String?
        repeat {
            let page = try lister.listSessions(owner: nil, limit: 1, cursor: cursor)
            paged += page.items.map(\.id)
            cursor = page.next
        } while cursor != nil && paged.count < 100
        #expect(paged == listed)
        #expect(try lister.listSessions(owner: nil, limit: 1000, cursor: nil, kind: .background).items.isEmpty)
        #expect(try lister.listSessions(owner: "someone else", limit: 1000, cursor: nil).items.allSatisfy { $0.owner == nil })
    }

    @Test("a command on a task no node holds is applied through any node, which gives the task back")
    func commandsOnQueuedTasks() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 1)
        defer { cluster.stop() }
        let session = try cluster.nodes[0].service.createSession(SessionCreate(configuration: SessionConfiguration()), owner: nil).session.id
        let created = try cluster.nodes[0].service.createTasks(in: session, (0..<4).map { index in
            TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.\(index + 1):9/q"))
        }, owner: nil)
        try await cluster.waitUntil("each node runs one") { cluster.running.count == 2 }
        let queued = try #require(created.map(\.id).first { id in !cluster.running.contains(id) })
        #expect(try cluster.rows()[queued]?.queued == true)

        // Suspended through the node that did not make it: out of the queue, no node's.
        let suspended = try cluster.nodes[1].service.suspend(task: queued, owner: nil)
        #expect(suspended.state == .suspended)
        let row = try #require(try cluster.rows()[queued])
        #expect(row.state == "suspended" && row.node == nil && !row.queued, "\(row)")
        #expect(try cluster.nodes[0].service.task(queued, owner: nil).state == .suspended)

        // Resumed through the other: back in the queue, and it runs once a slot frees.
        #expect(try cluster.nodes[0].service.resume(task: queued, owner: nil).state == .running)
        #expect(try cluster.rows()[queued]?.queued == true)
        for node in cluster.nodes {
            for id in node.engine.startedIds where node.engine.isRunning(id) { node.engine.succeed(id) }
        }
        do {
            try await cluster.waitUntil("the resumed task runs") { cluster.running.contains(queued) }
        } catch {
            Issue.record("rows: \(try cluster.rows()), running: \(cluster.running), held: \(cluster.nodes.map(\.service.heldTaskCount))")
            throw error
        }
    }

    @Test("a session's events, a task's progress and commands on a running task cross nodes")
    func feedsAndCommandsCrossNodes() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 4)
        defer { cluster.stop() }
        let session = try cluster.nodes[0].service.createSession(SessionCreate(configuration: SessionConfiguration()), owner: nil).session.id
        // A feed long-poll held on each node before anything happens (for the longest a poll may
        // wait: with the whole suite on two cores this test has taken 35 s).
        let polls = Mutex<[Int: EventPage]>([:])
        for (index, node) in cluster.nodes.enumerated() {
            try node.service.events(session: session, after: 0, limit: 100, wait: 60, owner: nil) { page in polls.withLock { $0[index] = page } }
        }
        let id = try cluster.nodes[0].service.createTask(in: session, TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/f")), owner: nil).id
        try await cluster.waitUntil("a node runs it") { cluster.running.contains(id) }
        let holder = try #require(cluster.nodes.firstIndex { $0.engine.isRunning(id) })
        let other = cluster.nodes[1 - holder]

        // A progress poll on the node that does not run it wakes when the holder's commit
        // changes it; the suspend, asked of that node, is carried out by the holder.
        try await cluster.waitUntil("its start is stored") { try cluster.rows()[id]?.started == true }
        let version = try other.service.task(id, owner: nil).version
        let progressed = Mutex<ProgressSnapshot?>(nil)
        try other.service.progress(task: id, after: version, wait: 60, owner: nil) { snapshot in progressed.withLock { $0 = snapshot } }
        let suspended = try other.service.suspend(task: id, owner: nil)
        #expect(suspended.state == .suspended, "the holder's answer: \(suspended.state)")
        try await cluster.waitUntil("the progress poll wakes") { progressed.withLock { $0 != nil } }
        #expect(progressed.withLock { $0?.state } == .suspended)

        // Resumed and cancelled through the other node too; the feed read on either node has
        // every event once, numbered in commit order.
        #expect(try other.service.resume(task: id, owner: nil).state == .running)
        _ = try other.service.cancel(task: id, owner: nil)
        if cluster.nodes[holder].engine.isRunning(id) { cluster.nodes[holder].engine.fail(id, .cancelled) }
        try await cluster.waitUntil("the cancel completes the task") { try cluster.rows()[id]?.state == "completed" }
        #expect(try cluster.nodes[0].service.task(id, owner: nil).error?.code == URLErrorCode.cancelled.rawValue)
        try cluster.nodes[holder].service.store.commit()
        // The feed polls held since the start woke with the first committed events, on both nodes.
        try await cluster.waitUntil("both feed polls are answered") { polls.withLock { $0.count } == 2 }
        for page in polls.withLock({ Array($0.values) }) {
            #expect(!page.events.isEmpty && page.events.allSatisfy { $0.sessionId == session }, "\(page)")
        }
        var feeds: [[TaskEvent]] = []
        for node in cluster.nodes {
            let page = Mutex<EventPage?>(nil)
            try node.service.events(session: session, after: 0, limit: 1000, wait: 0, owner: nil) { answer in page.withLock { $0 = answer } }
            try await cluster.waitUntil("the feed is read") { page.withLock { $0 != nil } }
            feeds.append(page.withLock { $0?.events } ?? [])
        }
        let seqs = feeds.map { $0.map(\.seq) }
        #expect(seqs[0] == seqs[1])
        #expect(!seqs[0].isEmpty && seqs[0] == Array(1...seqs[0].count), "numbered 1, 2, 3... in the session: \(seqs[0])")
        #expect(feeds[0].filter { $0.taskId == id && $0.type == .didCompleteWithError }.count == 1, "\(feeds[0].map(\.type))")
    }

    @Test("invalidateAndCancel through one node cancels the session's tasks on every node and in the queue, and ends it once")
    func invalidationSpansTheNodes() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 1)
        defer { cluster.stop() }
        let maker = cluster.nodes[0].service
        let session = try maker.createSession(SessionCreate(configuration: SessionConfiguration()), owner: nil).session.id
        let ids = try maker.createTasks(in: session, (0..<4).map { index in
            TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.\(index + 1):9/i"))
        }, owner: nil).map(\.id)
        try await cluster.waitUntil("each node runs one") { cluster.running.count == 2 }
        // Node 1 knows the session (it runs one of its tasks) before the invalidation.
        _ = try cluster.nodes[1].service.session(session, owner: nil)

        _ = try cluster.nodes[1].service.invalidate(session: session, cancelTasks: true, owner: nil)
        for node in cluster.nodes {
            for id in node.engine.startedIds where node.engine.isRunning(id) { node.engine.fail(id, .cancelled) }
        }
        try await cluster.waitUntil("every task completes") { try cluster.rows().values.allSatisfy { $0.state == "completed" } }
        for id in ids { #expect(try maker.task(id, owner: nil).error?.code == URLErrorCode.cancelled.rawValue, "task \(id)") }
        try await cluster.waitUntil("the session is invalidated in the store") {
            try cluster.database.run("SELECT record::jsonb->>'state' FROM sessions WHERE id = $1", session).first?.string(0) == "invalidated"
        }
        // Both nodes refuse new tasks, and the feed tells of the end once.
        try await cluster.waitUntil("both nodes see it") { cluster.nodes.allSatisfy { (try? $0.service.session(session, owner: nil).state) == .invalidated } }
        for node in cluster.nodes {
            #expect(throws: ServiceError.self) {
                try node.service.createTask(in: session, TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/late")), owner: nil)
            }
        }
        let page = Mutex<EventPage?>(nil)
        try maker.events(session: session, after: 0, limit: 1000, wait: 0, owner: nil) { answer in page.withLock { $0 = answer } }
        try await cluster.waitUntil("the feed is read") { page.withLock { $0 != nil } }
        let ends = page.withLock { $0?.events.filter { $0.type == .didBecomeInvalid }.count }
        #expect(ends == 1)
    }

    @Test("another tenant reaches nothing of a task through a node that does not run it: no read, no poll, no command passed on")
    func tenantsStayApartAcrossNodes() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 4)
        defer { cluster.stop() }
        let session = try cluster.nodes[0].service.createSession(SessionCreate(configuration: SessionConfiguration()), owner: "alice").session.id
        let id = try cluster.nodes[0].service.createTask(in: session, TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/t")), owner: "alice").id
        try await cluster.waitUntil("a node runs it") { cluster.running.contains(id) }
        let holder = try #require(cluster.nodes.firstIndex { $0.engine.isRunning(id) })
        let other = cluster.nodes[1 - holder].service
        let commandsBefore = cluster.nodes[holder].engine.commands.count

        #expect(throws: ServiceError.notFound("no task \(id)")) { try other.task(id, owner: "bob") }
        #expect(throws: ServiceError.self) { try other.suspend(task: id, owner: "bob") }
        #expect(throws: ServiceError.self) { try other.cancel(task: id, owner: "bob") }
        #expect(throws: ServiceError.self) { try other.progress(task: id, after: 0, wait: 0, owner: "bob") { _ in } }
        #expect(throws: ServiceError.self) { try other.events(session: session, after: 0, limit: 10, wait: 0, owner: "bob") { _ in } }
        #expect(try cluster.database.run("SELECT count(*) FROM task_commands").first?.int(0) == 0, "a command was passed on for bob")
        #expect(cluster.nodes[holder].engine.commands.count == commandsBefore)
        #expect(try other.task(id, owner: "alice").state == .running)
    }

    @Test("the queue, the figures and a tenant's quota are the cluster's, whichever node is asked")
    func theQueueFiguresAndQuotasAreTheClusters() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 4) { $0.tenantQuotas = TenantQuotas(maxTasks: 6) }
        defer { cluster.stop() }
        let (maker, other) = (cluster.nodes[0].service, cluster.nodes[1].service)
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = 1
        let session = try maker.createSession(SessionCreate(configuration: configuration), owner: "alice").session.id
        let spec = TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/q"))
        let ids = try maker.createTasks(in: session, Array(repeating: spec, count: 5), owner: "alice").map(\.id)
        try await cluster.waitUntil("one task runs") { cluster.running.count == 1 }

        // The queue is the store's: the node that made none of them lists the four waiting.
        let queue = try other.queue(owner: "alice", limit: 10, countsEveryone: false)
        #expect(queue.total == 4)
        #expect(queue.tasks.map(\.position) == [1, 2, 3, 4])
        #expect(Set(queue.tasks.map(\.taskId)) == Set(ids).subtracting(cluster.running))
        #expect(queue.tasks.allSatisfy { $0.waitingFor == "hostCap" }, "\(queue.tasks.map(\.waitingFor))")
        #expect(try other.queue(owner: "bob", limit: 10, countsEveryone: false).total == 0, "bob learns nothing of alice's queue")
        #expect(try other.queue(owner: "bob", limit: 10, countsEveryone: true).tasks.isEmpty, "an admin's count, not alice's tasks")

        // The figures add up every node's (the runner's from its heartbeat) and the store's queue.
        try await cluster.waitUntil("the runner's heartbeat reports it", timeout: 15) {
            let stats = try other.stats()
            return stats.running == 1 && stats.queued == 4 && stats.maxConcurrentTransfers == 8
        }

        // The quota counts alice's tasks on every node: 5 held, 6 allowed, through either node.
        #expect(throws: ServiceError.self) { try other.createTasks(in: session, [spec, spec], owner: "alice") }
        _ = try other.createTask(in: session, spec, owner: "alice")
        #expect(throws: ServiceError.self) { try maker.createTask(in: session, spec, owner: "alice") }
        #expect(try maker.quotaUsage(owner: "alice").tasks == 6)
        #expect(try other.quotaUsage(owner: "bob").tasks == 0)

        // A finished task frees its place, whichever node ran it.
        for node in cluster.nodes {
            for id in node.engine.startedIds where node.engine.isRunning(id) { node.engine.succeed(id, body: Data("done".utf8)) }
        }
        try await cluster.waitUntil("the finished task is counted out") { try other.quotaUsage(owner: "alice").tasks == 5 }
        _ = try maker.createTask(in: session, spec, owner: "alice")
    }

    @Test("the daemon-wide rate limits changed through one node hold on every node, and their engines follow")
    func rateLimitsChangedThroughOneNodeHoldOnEveryNode() async throws {
        let cluster = try Cluster(nodes: 3, maxConcurrent: 4)
        defer { cluster.stop() }
        let changed = try cluster.nodes[0].service.updateBandwidthLimits(BandwidthLimitsPatch(
            global: BandwidthLimitPatch(downloadBytesPerSecond: .some(500_000)),
            background: BandwidthLimitPatch(uploadBytesPerSecond: .some(1_000))))
        #expect(changed.downloadBytesPerSecond == 500_000 && changed.background.uploadBytesPerSecond == 1_000)
        try await cluster.waitUntil("every node has the new limits") {
            cluster.nodes.allSatisfy { $0.service.bandwidthLimits == changed }
        }
        for node in cluster.nodes.dropFirst() {
            let last = node.engine.commands.compactMap { command -> BandwidthLimits? in
                if case .setLimits(let limits) = command { return limits }
                return nil
            }.last
            #expect(last == changed, "the engine of a node that did not take the PATCH runs at the old limits")
        }

        // Back to unlimited through another node: the first follows too.
        let cleared = try cluster.nodes[2].service.updateBandwidthLimits(BandwidthLimitsPatch(
            global: BandwidthLimitPatch(downloadBytesPerSecond: .some(nil)), background: BandwidthLimitPatch(uploadBytesPerSecond: .some(nil))))
        #expect(cleared == BandwidthLimits())
        try await cluster.waitUntil("every node is unlimited again") {
            cluster.nodes.allSatisfy { $0.service.bandwidthLimits == cleared }
        }
    }

    @Test("a tenant's task quota holds when two nodes create for it at the same moment")
    func theTaskQuotaHoldsAcrossNodesCreatingAtOnce() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 2) { $0.tenantQuotas = TenantQuotas(maxTasks: 12) }
        defer { cluster.stop() }
        let session = try cluster.nodes[0].service.createSession(SessionCreate(configuration: SessionConfiguration()), owner: "alice").session.id
        let spec = TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/quota"))
        // 40 creations of two tasks each, half through each node, eight at a time.
        let made = Mutex(0)
        let nodes = cluster.nodes.map(\.service)
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            if (try? nodes[index % 2].createTasks(in: session, [spec, spec], owner: "alice")) != nil {
                made.withLock { $0 += 2 }
            }
        }
        #expect(made.withLock { $0 } == 12, "the quota of 12 was passed or not reached")
        #expect(try cluster.database.run("SELECT count(*) FROM tasks WHERE owner = 'alice' AND state <> 'completed'").first?.int(0) == 12)
        #expect(try nodes[1].quotaUsage(owner: "alice").tasks == 12)
    }

    @Test("the change feed of tasks is every node's, in commit order, through any node, and each tenant's own")
    func theChangeFeedSpansTheNodes() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 4)
        defer { cluster.stop() }
        let (maker, other) = (cluster.nodes[0].service, cluster.nodes[1].service)
        let session = try maker.createSession(SessionCreate(configuration: SessionConfiguration()), owner: "alice").session.id
        let spec = TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/feed"))
        let ids = try maker.createTasks(in: session, Array(repeating: spec, count: 3), owner: "alice").map(\.id)
        // A transaction left open in another database of the server does not hold the feed back.
        let elsewhere = try PostgresConnection(url: cluster.server)
        try elsewhere.execute(script: "BEGIN; SELECT pg_current_xact_id();")
        defer {
            _ = try? elsewhere.execute(script: "COMMIT")
            elsewhere.close()
        }

        // Claimed and started, their starts stored: their rows hold still from here until one
        // completes, so what a poll sees next is that completion.
        try await cluster.waitUntil("the three run", timeout: 30) {
            try cluster.running.isSuperset(of: ids) && ids.allSatisfy { try cluster.rows()[$0]?.started == true }
        }
        // All three through the node that made none of them (few reads: with the whole suite on
        // two cores, a test's sleeps between reads took seconds each).
        try await cluster.waitUntil("the three tasks are listed", timeout: 30) {
            Set(try Self.changes(other, after: 0, limit: 100, wait: 0, owner: "alice").tasks.map(\.id)).isSuperset(of: ids)
        }
        // Then page by page from the start, a task a page, cursors ascending (a task whose row
        // changed meanwhile, claimed and started, comes again further on).
        var seen: [Int] = [], cursor = 0, pages: [String] = []
        for _ in 0..<100 where !Set(seen).isSuperset(of: ids) {
            let page = try Self.changes(other, after: cursor, limit: 1, wait: 0, owner: "alice")
            #expect(!page.resync && page.next >= cursor && page.tasks.count <= 1)
            seen += page.tasks.map(\.id)
            pages.append("after \(cursor): \(page.tasks.map(\.id)) next \(page.next)")
            cursor = page.next
            if page.tasks.isEmpty { usleep(20_000) }
        }
        #expect(Set(seen).isSuperset(of: ids), "pages: \(pages)")
        #expect(try Self.changes(other, after: 0, limit: 100, wait: 0, owner: "bob").tasks.isEmpty, "bob sees alice's tasks")

        // A poll held on one node wakes when the node that runs the task completes it. With the
        // whole suite on two cores, this test's sleep of 200 ms once ended after the poll's 20 s
        // (CI): so each answer is timed, an empty one is right only at its deadline, and a poll
        // that reached it is held again.
        let from = cursor
        let held = Mutex<(page: TaskChangePage, after: Duration)?>(nil)
        for attempt in 1...3 {
            held.withLock { $0 = nil }
            let asked = ContinuousClock.now
            other.taskChanges(after: from, limit: 100, wait: 20, owner: "alice") { page in held.withLock { $0 = (page, .now - asked) } }
            try await Task.sleep(for: .milliseconds(200))
            guard let early = held.withLock({ $0 }) else { break }
            #expect(early.page.tasks.isEmpty && early.page.removed.isEmpty && early.after >= .seconds(19),
                    "the poll answered before its deadline with nothing new: \(early)")
            #expect(attempt < 3, "three polls reached their deadline before this test could go on")
        }
        let finished = try #require(cluster.running.first)
        for node in cluster.nodes where node.engine.isRunning(finished) { node.engine.succeed(finished, body: Data("done".utf8)) }
        try await cluster.waitUntil("the held poll answers", timeout: 30) { held.withLock { $0 } != nil }
        var woken = try #require(held.withLock { $0 })
        if woken.page.tasks.isEmpty {
            // Reached its deadline before the completion (as above): the completion is then next.
            #expect(woken.after >= .seconds(19), "the poll answered before its deadline with nothing new: \(woken)")
            woken = (try Self.changes(other, after: from, limit: 100, wait: 20, owner: "alice"), .zero)
        }
        #expect(woken.page.tasks.contains { $0.id == finished && $0.state == .completed }, "\(woken.page.tasks.map { "\($0.id) \($0.state)" })")
        #expect(woken.page.next > from)

        // A deletion through one node is a removal in the other's feed, for alice only.
        try await cluster.waitUntil("the completion is stored") { try cluster.rows()[finished]?.state == "completed" }
        try maker.deleteTask(finished, owner: "alice")
        try await cluster.waitUntil("the removal is listed", timeout: 30) {
            try Self.changes(other, after: woken.page.next, limit: 100, wait: 0, owner: "alice").removed == [finished]
        }
        #expect(try Self.changes(other, after: woken.page.next, limit: 100, wait: 0, owner: "bob").removed.isEmpty)
        // A cursor this feed never gave starts over.
        #expect(try Self.changes(other, after: Int.max / 2, limit: 100, wait: 0, owner: "alice").resync)
    }

    @Test("a session's webhook posts every node's events once, in the feed's order, and another node takes over when its poster stops")
    func webhooksSpanTheNodes() async throws {
        let receiver = try OriginServer { _ in .respond(status: 204) }
        defer { receiver.stop() }
        let cluster = try Cluster(nodes: 2, maxConcurrent: 4, joined: 1)
        defer { cluster.stop() }
        let (first, second) = (cluster.nodes[0], cluster.nodes[1])
        var create = SessionCreate(configuration: SessionConfiguration())
        create.webhook = WebhookSpec(url: receiver.url("/hook"), secret: "whsec-0123456789abcdef")
        let session = try second.service.createSession(create, owner: nil).session.id
        let spec = TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/hook"))

        // Made through the node that does not run tasks yet: the other one runs them, and posts.
        let early = try second.service.createTasks(in: session, [spec, spec], owner: nil).map(\.id)
        try await cluster.waitUntil("both run on the first node") { early.allSatisfy(first.engine.isRunning) }
        for id in early { first.engine.succeed(id, body: Data("one".utf8)) }
        // Both completions committed and posted: nothing is in flight when the first node stops
        // (a delivery it dropped would be posted again by the next node: at least once).
        try await cluster.waitUntil("the first events are posted", timeout: 15) {
            let feed = try Self.events(second.service, session)
            return try feed.count { $0.type == .didCompleteWithError } == 2 && Self.posted(receiver) == feed.map(\.seq)
        }

        // The first node stops; the second now runs the tasks and takes the webhook over.
        first.service.stop()
        cluster.join(1)
        let late = try second.service.createTasks(in: session, [spec, spec], owner: nil).map(\.id)
        try await cluster.waitUntil("both run on the second node", timeout: 15) { late.allSatisfy(second.engine.isRunning) }
        for id in late { second.engine.succeed(id, body: Data("two".utf8)) }
        try await cluster.waitUntil("every event is posted", timeout: 15) {
            let feed = try Self.events(second.service, session)
            return try feed.count { $0.type == .didCompleteWithError } == 4 && Self.posted(receiver).last == feed.last?.seq
        }
        let posted = try Self.posted(receiver)
        let feed = try Self.feed(second.service, session)
        #expect(posted == feed, "each event once, in the feed's order: posted \(posted), feed \(feed)")
        #expect(try cluster.database.run("SELECT delivered_through FROM webhook_cursors").first?.int(0) == posted.last)
    }

    @Test("an interactive task waiting in the cluster's queue takes the slot of a full node's background download")
    func aFullNodePreemptsForTheClustersQueue() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 1)
        defer { cluster.stop() }
        let service = cluster.nodes[0].service
        var background = SessionConfiguration()
        background.networkServiceType = .background
        var interactive = SessionConfiguration()
        interactive.networkServiceType = .responsiveData
        let slow = try service.createSession(SessionCreate(configuration: background), owner: nil).session.id
        let urgent = try service.createSession(SessionCreate(configuration: interactive), owner: nil).session.id
        let downloads = try service.createTasks(in: slow, (0..<2).map { index in
            TaskCreate(kind: .download, request: RequestSpec(url: "http://127.0.0.1:9/big\(index).bin"))
        }, owner: nil).map(\.id)
        try await cluster.waitUntil("each node runs a download") { Set(downloads) == cluster.running }

        let task = try service.createTask(in: urgent, TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/urgent")), owner: nil).id
        // One node claims it for the slot of its download, which it asks the engine to let go.
        try await cluster.waitUntil("a node preempts its download for it") {
            cluster.nodes.contains { node in
                node.engine.commands.contains { $0.summary == "preempt" } && node.engine.startedIds.contains(task)
            }
        }
        let preempting = try #require(cluster.nodes.first { $0.engine.startedIds.contains(task) })
        let victim = try #require(downloads.first { id in preempting.engine.controls(of: id).contains { $0.summary == "preempt" } })
        preempting.engine.respond(to: victim, with: .detached(nil))
        #expect(try cluster.rows()[task]?.node != nil)
        preempting.engine.succeed(task)
        // The download goes on where it was preempted, once the slot is free again.
        try await cluster.waitUntil("the download starts again") { preempting.engine.startedIds.filter { $0 == victim }.count == 2 }
    }

    @Test("a command passed to a node that does not answer holds no thread: it is answered later, with a clear error")
    func aForwardedCommandIsAnsweredLater() async throws {
        let cluster = try Cluster(nodes: 2, maxConcurrent: 4, joined: 1)
        defer { cluster.stop() }
        let (first, second) = (cluster.nodes[0], cluster.nodes[1])
        let session = try first.service.createSession(SessionCreate(configuration: SessionConfiguration()), owner: nil).session.id
        let id = try first.service.createTask(in: session, TaskCreate(kind: .data, request: RequestSpec(url: "http://127.0.0.1:9/ghost")), owner: nil).id
        _ = try await first.engine.waitForStart(of: id)
        // A node that holds the lease and never answers (stopped, partitioned).
        try cluster.database.run("UPDATE tasks SET node = 'ghost', lease_expires = now() + interval '60 seconds' WHERE id = $1", id)
        cluster.join(1)

        let asked = ContinuousClock.now
        var passed: CommandForwarded?
        do {
            _ = try second.service.command(.suspend, task: id, owner: nil)
        } catch let forwarded as CommandForwarded {
            passed = forwarded
        }
        let forwarded = try #require(passed, "the command was not passed on")
        #expect(ContinuousClock.now - asked < .seconds(1), "the caller waited for the other node")
        let answer = Mutex<Result<TransferTask, any Error>?>(nil)
        forwarded.answer { result in answer.withLock { $0 = result } }
        try await cluster.waitUntil("the command is answered", timeout: 10) { answer.withLock { $0 != nil } }
        #expect(ContinuousClock.now - asked >= .seconds(3), "answered before the lease timeout")
        #expect(throws: StoreReadFailure.self) { try answer.withLock { $0! }.get() }
        #expect(try cluster.database.run("SELECT count(*) FROM task_commands").first?.int(0) == 0, "the unanswered command was withdrawn")
    }

    /// The event numbers the receiver got, in the order it got them.
    static func posted(_ receiver: OriginServer) throws -> [Int] {
        try receiver.requests.sorted { $0.index < $1.index }.flatMap { request -> [Int] in
            let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
            return (body["events"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
        }
    }

    /// The session's feed, as any node serves it.
    static func feed(_ service: TransferService, _ session: String) throws -> [Int] { try events(service, session).map(\.seq) }

    static func events(_ service: TransferService, _ session: String) throws -> [TaskEvent] {
        let answer = Mutex<EventPage?>(nil)
        try service.events(session: session, after: 0, limit: 1000, wait: 0, owner: nil) { page in answer.withLock { $0 = page } }
        // At once, or from the thread of a commit's signal that woke the poll meanwhile.
        let deadline = ContinuousClock.now + .seconds(5)
        while answer.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(5_000) }
        return try #require(answer.withLock { $0 }).events
    }

    /// A poll's answer: at once, or from the thread of a commit's signal that woke it meanwhile.
    static func changes(_ service: TransferService, after: Int, limit: Int, wait: Double, owner: String?) throws -> TaskChangePage {
        let answer = Mutex<TaskChangePage?>(nil)
        service.taskChanges(after: after, limit: limit, wait: wait, owner: owner) { page in answer.withLock { $0 = page } }
        let deadline = ContinuousClock.now + .seconds(wait + 5)
        while answer.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(5_000) }
        return try #require(answer.withLock { $0 })
    }
}

/// Nodes on one scratch database (dropped at `stop`) and one data folder.
final class Cluster: Sendable {
    struct Node: Sendable {
        let service: TransferService
        let engine: FakeEngine
    }

    let folder: TempDirectory
    let databaseName: String
    let server: String
    let database: PostgresConnection
    let nodes: [Node]

    init(nodes count: Int, maxConcurrent: Int, joined: Int? = nil, configure: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        server = try Peers.postgres()
        databaseName = "c_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try PostgresConnection(url: server)
        defer { admin.close() }
        try admin.execute(script: "CREATE DATABASE \(databaseName)")
        let url = String(server[...server.lastIndex(of: "/")!]) + databaseName
        let folder = try TempDirectory(prefix: "transferd-cluster")
        self.folder = folder
        database = try PostgresConnection(url: url)
        nodes = try (0..<count).map { index in
            var configuration = ServiceConfiguration(dataDirectory: folder.path)
            configuration.nodeId = "node\(index)"
            configuration.leaseTimeout = 3
            configuration.maxConcurrentTransfers = maxConcurrent
            configure(&configuration)
            configuration.openStore = { instruments, logger in
                try PostgresStore(url: url, instruments: instruments, logger: logger)
            }
            let engine = FakeEngine()
            let service = try TransferService(configuration: configuration, engine: engine)
            service.start()
            return Node(service: service, engine: engine)
        }
        for index in 0..<(joined ?? count) { join(index) }
    }

    func join(_ index: Int) { nodes[index].service.joinCluster(host: "127.0.0.1", port: 9000 + index) }

    /// The tasks some node's engine runs now.
    var running: Set<Int> {
        Set(nodes.flatMap { node in node.engine.startedIds.filter(node.engine.isRunning) })
    }

    struct Row: Sendable, CustomStringConvertible {
        let state: String
        let node: String?
        let epoch: Int
        let queued: Bool
        /// Whether the stored record has the task's start.
        let started: Bool
        var description: String { "\(state) node=\(node ?? "-") epoch=\(epoch) queued=\(queued)" }
    }

    func rows() throws -> [Int: Row] {
        var rows: [Int: Row] = [:]
        for row in try database.run("SELECT id, state, node, lease_epoch, queued, record::jsonb ? 'startedAt' FROM tasks") {
            rows[row.int(0)!] = Row(state: row.string(1)!, node: row.string(2), epoch: row.int(3)!, queued: row.bool(4)!, started: row.bool(5)!)
        }
        return rows
    }

    func waitUntil(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw ClusterWaitTimedOut(what: what) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func stop() {
        for node in nodes { node.service.stop() }
        database.close()
        if let admin = try? PostgresConnection(url: server) {
            _ = try? admin.execute(script: "DROP DATABASE IF EXISTS \(databaseName) WITH (FORCE)")
            admin.close()
        }
        folder.remove()
    }
}

struct ClusterWaitTimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting until \(what)" }
}
