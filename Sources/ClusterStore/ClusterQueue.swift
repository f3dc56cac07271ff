public import PostgreSQL

/// A task's place in the cluster: which node runs it and under which epoch (docs/cluster.md).
public struct TaskLease: Sendable, Equatable, Hashable {
    public let taskId: Int
    /// The fencing token: every write the holder makes names it, and a later claim raises it.
    public let epoch: Int

    public init(taskId: Int, epoch: Int) {
        self.taskId = taskId
        self.epoch = epoch
    }
}

/// A task put in the cluster's queue: its row and what admission orders and caps it by.
public struct QueuedTaskRow: Sendable {
    public var id: Int
    public var sessionId: String
    public var owner: String = ""
    public var state: String = "running"
    public var record: String = "{}"
    public var version: Int = 1
    public var discretionary = false
    /// `SchedulingClass.rank`: 0 interactive ... 3 background.
    public var classRank = 2
    public var priority = 0.5
    /// The key the per-host cap counts by, and the cap.
    public var host: String
    public var hostCap = 6
    /// The session's cap on running tasks; nil for none.
    public var sessionCap: Int? = nil

    public init(id: Int, sessionId: String, host: String) {
        self.id = id
        self.sessionId = sessionId
        self.host = host
    }
}

/// The cluster's queue and leases on PostgreSQL: claiming in admission order within the caps,
/// renewing, fenced writes, release, and taking expired leases back into the queue. Every
/// function is one transaction (or one statement), safe to run from any node at any time.
public enum ClusterQueue {
    /// Puts a task in the queue behind every task queued before it (of its class and priority).
    public static func enqueue(_ row: QueuedTaskRow, on database: PostgresConnection) throws {
        try database.run("""
            INSERT INTO tasks (id, session_id, owner, state, record, version, queued, discretionary,
                               class_rank, priority, queue_order, host, host_cap, session_cap)
            VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8, $9, nextval('task_queue_order'), $10, $11, $12)
            """, row.id, row.sessionId, row.owner, row.state, row.record, row.version, row.discretionary,
            row.classRank, row.priority, row.host, row.hostCap, row.sessionCap)
    }

    /// Leases up to `limit` queued tasks to `node` for `leaseSeconds`, first in admission order,
    /// skipping those whose host or session is at its cap across the cluster.
    ///
    /// How the caps hold: candidates are locked with `FOR UPDATE SKIP LOCKED` (a claim running
    /// at once on another node takes others and neither waits); then a transaction-scoped
    /// advisory lock per host and per capped session among them, taken in one global order
    /// (hosts, then sessions, each by name) so two claims never wait on each other in a cycle;
    /// then the leased tasks of each are counted from the rows, which a claim that held the lock
    /// before has committed. A host or session found full is left out of the next round's
    /// candidates, so tasks behind a full host are still reached.
    ///
    /// A later round locks its hosts after the earlier round's, so two claims can wait on each
    /// other; PostgreSQL then ends one with a deadlock error (40P01), and that claim is tried
    /// again (up to `claimAttempts` times) rather than failing its caller.
    ///
    /// `beforeClassRank`: only tasks of an earlier class than that rank, none discretionary (what
    /// a full node claims to preempt its background transfers for, as a daemon alone would).
    public static func claim(node: String, limit: Int, leaseSeconds: Double, beforeClassRank: Int? = nil,
                             on database: PostgresConnection) throws -> [TaskLease] {
        guard limit > 0 else { return [] }
        for attempt in 1... {
            do {
                return try claimOnce(node: node, limit: limit, leaseSeconds: leaseSeconds, beforeClassRank: beforeClassRank, on: database)
            } catch let error as PostgresError where error.isRetryable && attempt < claimAttempts {
                continue
            }
        }
        return []
    }

    static let claimAttempts = 3

    private static func claimOnce(node: String, limit: Int, leaseSeconds: Double, beforeClassRank: Int?,
                                  on database: PostgresConnection) throws -> [TaskLease] {
        // An integer the caller gave, not text: safe to write into the statement.
        let classes = beforeClassRank.map { " AND class_rank < \($0) AND NOT discretionary" } ?? ""
        return try database.transaction { tx in
            var leases: [TaskLease] = []
            var fullHosts: Set<String> = [], fullSessions: Set<String> = []
            var hostLeased: [String: Int] = [:], sessionLeased: [String: Int] = [:]
            for _ in 0..<Self.claimRounds where leases.count < limit {
                let candidates = try tx.run("""
                    SELECT id, host, host_cap, session_id, session_cap FROM tasks
                    WHERE queued AND NOT (host = ANY($2::text[])) AND NOT (session_id = ANY($3::text[]))\(classes)
                    ORDER BY discretionary, class_rank, priority DESC, queue_order
                    LIMIT $1 FOR UPDATE SKIP LOCKED
                    """, limit - leases.count, textArray(fullHosts), textArray(fullSessions)).compactMap(Candidate.init)
                guard !candidates.isEmpty else { break }
                for host in Set(candidates.map(\.host)).subtracting(hostLeased.keys).sorted() {
                    try tx.run("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "host:" + host)
                    hostLeased[host] = try tx.run("SELECT count(*) FROM tasks WHERE host = $1 AND node IS NOT NULL", host).first?.int(0) ?? 0
                }
                for session in Set(candidates.filter { $0.sessionCap != nil }.map(\.session)).subtracting(sessionLeased.keys).sorted() {
                    try tx.run("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "session:" + session)
                    sessionLeased[session] = try tx.run("SELECT count(*) FROM tasks WHERE session_id = $1 AND node IS NOT NULL", session).first?.int(0) ?? 0
                }
                var chosen: [Int] = []
                for candidate in candidates where leases.count + chosen.count < limit {
                    guard hostLeased[candidate.host, default: 0] < candidate.hostCap else {
                        fullHosts.insert(candidate.host)
                        continue
                    }
                    if let cap = candidate.sessionCap, sessionLeased[candidate.session, default: 0] >= cap {
                        fullSessions.insert(candidate.session)
                        continue
                    }
                    hostLeased[candidate.host, default: 0] += 1
                    if candidate.sessionCap != nil { sessionLeased[candidate.session, default: 0] += 1 }
                    chosen.append(candidate.id)
                }
                // The round's leases in one statement (the rows are locked: none goes meanwhile).
                if !chosen.isEmpty {
                    let order = Dictionary(uniqueKeysWithValues: chosen.enumerated().map { ($1, $0) })
                    leases += try tx.run("""
                        UPDATE tasks SET queued = false, node = $2, lease_epoch = lease_epoch + 1,
                                         lease_expires = now() + make_interval(secs => $3)
                        WHERE id = ANY($1::bigint[]) RETURNING id, lease_epoch
                        """, PostgresArrays.integers(chosen), node, leaseSeconds).compactMap { row in
                        guard let id = row.int(0), let epoch = row.int(1) else { return nil }
                        return TaskLease(taskId: id, epoch: epoch)
                    }.sorted { order[$0.taskId, default: 0] < order[$1.taskId, default: 0] }  // admission order
                }
            }
            return leases
        }
    }

    /// At most this many rounds of candidates per claim, each of as many as are still wanted
    /// (locking more would keep them from a claim running at once on another node) and each
    /// leaving out the hosts and sessions the previous found full. What a claim does not reach,
    /// the next one does.
    static let claimRounds = 8

    /// Extends every lease `node` still holds; returns them. A lease missing from the answer
    /// was taken over: the node must stop that transfer.
    public static func renew(node: String, leaseSeconds: Double, on database: PostgresConnection) throws -> [TaskLease] {
        try database.run("""
            UPDATE tasks SET lease_expires = now() + make_interval(secs => $2) WHERE node = $1
            RETURNING id, lease_epoch
            """, node, leaseSeconds).compactMap { row in
            guard let id = row.int(0), let epoch = row.int(1) else { return nil }
            return TaskLease(taskId: id, epoch: epoch)
        }
    }

    /// Writes a task's state and record, only while `node` holds `lease`: false when the lease
    /// was taken over (the write changed nothing).
    public static func update(_ lease: TaskLease, node: String, state: String, record: String, version: Int, on database: PostgresConnection) throws -> Bool {
        try !database.run("""
            UPDATE tasks SET state = $4, record = $5, version = $6
            WHERE id = $1 AND node = $2 AND lease_epoch = $3 RETURNING id
            """, lease.taskId, node, lease.epoch, state, record, version).isEmpty
    }

    /// Gives a lease up: the task goes back to the queue (`requeue`, in its old place) or leaves
    /// it (completed). False when the lease was no longer `node`'s.
    public static func release(_ lease: TaskLease, node: String, requeue: Bool, on database: PostgresConnection) throws -> Bool {
        try !database.run("""
            UPDATE tasks SET node = NULL, lease_expires = NULL, queued = $4
            WHERE id = $1 AND node = $2 AND lease_epoch = $3 RETURNING id
            """, lease.taskId, node, lease.epoch, requeue).isEmpty
    }

    /// Puts the tasks whose lease expired (their node stopped renewing) back in the queue, in
    /// their old place; returns their ids. Their epoch stays until the next claim raises it.
    public static func requeueExpired(on database: PostgresConnection) throws -> [Int] {
        // Rows another transaction holds are skipped, not waited for: that may be the frozen
        // node itself, mid-transaction; its session ends (`transactionIdleTimeout`) and the
        // next round takes them.
        try database.run("""
            UPDATE tasks SET queued = true, node = NULL, lease_expires = NULL
            WHERE id IN (SELECT id FROM tasks WHERE node IS NOT NULL AND lease_expires < now() FOR UPDATE SKIP LOCKED)
            RETURNING id
            """).compactMap { $0.int(0) }
    }

    /// A PostgreSQL array literal of texts (`{"a","b"}`), each element quoted and escaped, for
    /// a `$n::text[]` parameter.
    /// - SeeAlso: https://www.postgresql.org/docs/15/arrays.html#ARRAYS-IO
    static func textArray(_ values: some Collection<String>) -> String {
        "{" + values.sorted().map { value in
            "\"" + value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}"
    }

    private struct Candidate {
        let id: Int
        let host: String
        let hostCap: Int
        let session: String
        let sessionCap: Int?

        init?(_ row: PostgresRow) {
            guard let id = row.int(0), let host = row.string(1), let hostCap = row.int(2), let session = row.string(3) else { return nil }
            self.id = id
            self.host = host
            self.hostCap = hostCap
            self.session = session
            sessionCap = row.int(4)
        }
    }
}
