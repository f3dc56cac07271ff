internal import FoundationEssentials
internal import Glibc
public import PostgreSQL
package import TransferModel
package import TransferStore

/// `ClusterCoordinator` on the cluster's database: shared numbers from `counters`, and the
/// queue and leases of `ClusterQueue`. On a connection of its own, so a claim never waits behind
/// the writer's transaction nor a read behind a claim.
///
/// Nothing here is a tenant's: ids, epochs and nodes. The rows a claim hands back are the tasks
/// as stored, each with its owner, and the service holds them to the same checks as any other.
///
/// Commands between nodes (`task_commands`): a row per command, for the node that holds the
/// task, with the requesting client's owner (the holder checks the task against it as for its
/// own clients) and, once carried out, the answer; each hand-over is signalled (`ClusterChange`).
package struct PostgresCoordinator: ClusterCoordinator {
    let database: PostgresConnection
    /// Feed reads run on the store's read connections, beside the API's other reads.
    let readers: PostgresStore
    /// For the listener's own connection, set up as the store's others (`PostgresStore.setup`).
    let url: String
    let setup: String
    /// This process's sessions' name (`PostgresStore.instance`), never ended by itself.
    let instance: String

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
        try claimed(try ClusterQueue.claim(node: node, limit: limit, leaseSeconds: leaseSeconds, on: database))
    }

    package func claimForPreemption(node: String, limit: Int, leaseSeconds: Double) throws -> [ClaimedTask] {
        try claimed(try ClusterQueue.claim(node: node, limit: limit, leaseSeconds: leaseSeconds,
                                           beforeClassRank: Int(SchedulingClass.background.rank), on: database))
    }

    /// The rows of the tasks a claim leased.
    private func claimed(_ leases: [TaskLease]) throws -> [ClaimedTask] {
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
        // Commands whose requester stopped waiting long ago (it waits a lease timeout at most).
        try database.run("DELETE FROM task_commands WHERE requested < now() - interval '10 minutes'")
        try ClusterTaskFeed.forgetOldRemovals(on: database)
        return try ClusterQueue.requeueExpired(on: database)
    }

    package func endSessions(ofNodesSilentFor seconds: Double) throws -> Int {
        try ClusterNodes.endSessions(silentFor: seconds, except: instance, on: database)
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

    package func sessions(createdAfter mark: Int, limit: Int) throws -> (sessions: [Session], mark: Int) {
        let rows = try database.run("SELECT \(StoredRows.sessionColumns), created FROM sessions WHERE created > $1 ORDER BY created LIMIT $2",
                                    mark, limit)
        return (try rows.map(StoredRows.session), rows.last?.int(2) ?? mark)
    }

    package func finishInvalidation(of session: Session) throws -> Bool {
        !(try database.run("""
            UPDATE sessions SET record = $2, version = $3, identifier = NULL
            WHERE id = $1 AND version < $3 AND record::jsonb->>'state' = 'invalidating' RETURNING id
            """, session.id, try Store.json(session), session.version)).isEmpty
    }

    package func unfinishedTaskCount(session: String) throws -> Int {
        try database.run("SELECT count(*) FROM tasks WHERE session_id = $1 AND state <> 'completed'", session).first?.int(0) ?? 0
    }

    package func tasks(session: String, after: Int, limit: Int) throws -> [StoredTaskJSON] {
        try database.run("""
            SELECT \(StoredRows.servedColumns) FROM tasks WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT $3
            """, session, after, limit).map(StoredRows.served)
    }

    // MARK: the cluster as a whole (on the read connections: nothing here writes)

    package func usage(owner: String?) throws -> StoredUsage {
        try ClusterOverviewQueries.usage(owner: owner, on: readers.nextReader())
    }

    package func queue(owner: String?, everyone: Bool, limit: Int) throws -> StoredQueuePage {
        try ClusterOverviewQueries.queue(owner: owner, everyone: everyone, limit: limit, on: readers.nextReader())
    }

    package func classCounts() throws -> StoredClassCounts {
        try ClusterOverviewQueries.classCounts(on: readers.nextReader())
    }

    package func taskChanges(after: Int, limit: Int, owner: String?) throws -> StoredTaskChanges {
        try ClusterTaskFeed.changes(after: after, limit: limit, owner: owner, on: readers.nextReader())
    }

    // MARK: webhooks

    package func takeWebhook(session id: String, node: String, leaseSeconds: Double) throws -> Int? {
        try ClusterWebhooks.take(session: id, node: node, leaseSeconds: leaseSeconds, on: database)
    }

    package func advanceWebhook(session id: String, node: String, through: Int) throws -> Bool {
        try ClusterWebhooks.advance(session: id, node: node, through: through, on: database)
    }

    package func releaseWebhook(session id: String, node: String) throws {
        try ClusterWebhooks.release(session: id, node: node, on: database)
    }

    package func webhooksBehind() throws -> [String] {
        try ClusterWebhooks.behind(on: readers.nextReader())
    }

    package func webhookSecret(session id: String) throws -> String? {
        try ClusterWebhooks.secret(session: id, on: readers.nextReader())
    }

    // MARK: feeds and signals

    package func events(session: String, after: Int, limit: Int) throws -> [TaskEvent] {
        let rows = try readers.read("""
            SELECT record, owner FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3
            """, session, after, max(1, limit))
        var events: [TaskEvent] = []
        for row in rows {
            events += try EventRows.decode(row.data(0) ?? Data(), owner: row.string(1)).filter { $0.seq > after }
        }
        return events
    }

    package func newestEventSeq(session: String) throws -> Int {
        try readers.read("SELECT seq FROM event_feeds WHERE session_id = $1", session).first?.int(0) ?? 0
    }

    package func listen(_ handle: @escaping @Sendable (ClusterHeard) -> Void) throws -> any ClusterListening {
        try ClusterChangeListener(url: url, setup: setup, handle: handle)
    }

    // MARK: commands between nodes

    package func sendCommand(task: Int, node: String, owner: String?, command: String) throws -> Int {
        try database.transaction { tx in
            guard let id = try tx.run("""
                INSERT INTO task_commands (task_id, node, owner, command) VALUES ($1, $2, $3, $4) RETURNING id
                """, task, node, owner, command).first?.int(0) else {
                throw PostgresError(sqlState: "", message: "a command row was not made", context: "")
            }
            try ClusterChange.send([.command(id: id, node: node)], in: tx)
            return id
        }
    }

    package func takeCommands(node: String) throws -> [ClusterCommandRow] {
        try database.run("""
            UPDATE task_commands SET taken = true WHERE node = $1 AND NOT taken RETURNING id, task_id, owner, command
            """, node).compactMap { row in
            guard let id = row.int(0), let task = row.int(1), let command = row.string(3) else { return nil }
            return ClusterCommandRow(id: id, taskId: task, owner: row.string(2), command: command)
        }.sorted { $0.id < $1.id }
    }

    package func answerCommand(id: Int, answer: String) throws {
        try database.transaction { tx in
            _ = try tx.run("UPDATE task_commands SET answer = $2 WHERE id = $1", id, answer)
            try ClusterChange.send([.answer(id: id)], in: tx)
        }
    }

    package func answer(ofCommand id: Int) throws -> String? {
        try database.run("DELETE FROM task_commands WHERE id = $1 AND answer IS NOT NULL RETURNING answer", id).first?.string(0)
    }

    package func withdrawCommand(id: Int) throws -> Bool {
        // A taken command's answer will come; it is read (and its row removed) when it does.
        !(try database.run("DELETE FROM task_commands WHERE id = $1 AND NOT taken RETURNING id", id)).isEmpty
    }
}

extension PostgresCoordinator {
    package func routeEphemeral(session: String, tasks: [Int], node: String) throws {
        try EphemeralRoutes.route(session: session, tasks: tasks, node: node, on: database)
    }

    package func ephemeralHolder(session: String?, task: Int?, except node: String, liveWithin seconds: Double) throws -> String? {
        try EphemeralRoutes.holder(session: session, task: task, except: node, within: seconds, on: database)
    }

    package func ephemeralHolders(except node: String, liveWithin seconds: Double) throws -> [String] {
        try EphemeralRoutes.holders(except: node, within: seconds, on: database)
    }
}

/// Creations for one tenant take turns across the nodes while a task quota is set: a
/// transaction-less advisory lock on the coordinator's connection (the class number, the
/// tenant's hash), taken by polling `pg_try_advisory_lock` so the connection is never blocked
/// for this node's claims and commands. Two requests of one node share its turn (a session's
/// advisory lock is re-entrant), where `CreationsInFlight` counts what each has on its way. A
/// connection lost meanwhile gives the turn up early: the read that follows may then miss another
/// node's creation, as before these turns.
extension PostgresCoordinator {
    /// The advisory lock class of tenant creation turns (any fixed number no other lock uses).
    static let creationTurns: Int32 = 0x7472_6431  // "trd1"

    package func beginTenantCreations(owner: String?) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        var pause: UInt32 = 500  // µs, doubling to 20 ms
        while try database.run("SELECT pg_try_advisory_lock($1::int4, hashtext($2))", Int(Self.creationTurns), owner ?? "").first?.bool(0) != true {
            guard ContinuousClock.now < deadline else {
                throw PostgresError(sqlState: "", message: "another node kept the tenant's creation turn for 10 s", context: "quota")
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    package func endTenantCreations(owner: String?) {
        _ = try? database.run("SELECT pg_advisory_unlock($1::int4, hashtext($2))", Int(Self.creationTurns), owner ?? "")
    }
}
