public import PostgreSQL
public import TransferModel
internal import FoundationEssentials

/// The nodes' registry: each node registers at start, beats every few seconds with its load
/// (`NodeLoad`) and leaves when it stops cleanly; a node silent for longer than the lease timeout
/// is not live, and its leases are taken back by `ClusterQueue.requeueExpired`. All times are
/// the database's (`now()`), so the nodes' clocks need not agree.
public enum ClusterNodes {
    /// Registers `id` (again, after a restart: its start time is renewed). The routes of its
    /// ephemeral sessions go: they lived in the memory of the process that registered before
    /// (a node the registry forgot and that comes back routes what it still holds again).
    /// `instance` is the `application_name` of the registering process's sessions
    /// (`endSessions`); nil leaves them out of reach.
    public static func register(id: String, address: String, instance: String? = nil, on database: PostgresConnection) throws {
        try database.transaction { tx in
            try tx.run("""
                INSERT INTO cluster_nodes (id, address, instance) VALUES ($1, $2, $3)
                ON CONFLICT (id) DO UPDATE SET address = excluded.address, instance = excluded.instance,
                                               started_at = now(), heartbeat_at = now()
                """, id, address, instance)
            try tx.run("DELETE FROM ephemeral_routes WHERE node = $1", id)
        }
    }

    /// Records that `id` is alive, with its load; false when its row is gone (`forget` took it
    /// as dead): the node must register again, and its leases are no longer its own.
    public static func heartbeat(id: String, load: NodeLoad = NodeLoad(running: 0, queued: 0, maxConcurrentTransfers: 0),
                                 on database: PostgresConnection) throws -> Bool {
        try !database.run("""
            UPDATE cluster_nodes SET heartbeat_at = now(), running = $2, queued = $3, max_transfers = $4, stats = $5
            WHERE id = $1 RETURNING id
            """, id, load.running, load.queued, load.maxConcurrentTransfers, load.stats).isEmpty
    }

    /// The figures (`NodeLoad.stats`) of the nodes heard from within `seconds`, by node id.
    public static func stats(within seconds: Double, on database: PostgresConnection) throws -> [String: String] {
        var stats: [String: String] = [:]
        for row in try database.run("""
            SELECT id, stats FROM cluster_nodes WHERE heartbeat_at > now() - make_interval(secs => $1) AND stats IS NOT NULL
            """, seconds) {
            if let id = row.string(0), let json = row.string(1) { stats[id] = json }
        }
        return stats
    }

    /// A node that stops cleanly leaves at once, rather than after the lease timeout.
    public static func leave(id: String, on database: PostgresConnection) throws {
        try database.run("DELETE FROM cluster_nodes WHERE id = $1", id)
    }

    /// The nodes heard from within `seconds`, by id, with their load and the tasks each holds.
    public static func live(within seconds: Double, on database: PostgresConnection) throws -> [ClusterNode] {
        try database.run("""
            SELECT n.id, n.address, extract(epoch FROM n.started_at)::double precision,
                   extract(epoch FROM now() - n.heartbeat_at)::double precision, count(t.id),
                   n.running, n.queued, n.max_transfers
            FROM cluster_nodes n LEFT JOIN tasks t ON t.node = n.id
            WHERE n.heartbeat_at > now() - make_interval(secs => $1)
            GROUP BY n.id ORDER BY n.id
            """, seconds).compactMap { row in
            guard let id = row.string(0), let address = row.string(1), let started = row.double(2),
                  let silent = row.double(3), let leased = row.int(4) else { return nil }
            return ClusterNode(id: id, address: address, startedAt: Date(timeIntervalSince1970: started), heartbeatAge: silent,
                               running: row.int(5) ?? 0, queued: row.int(6) ?? 0, maxConcurrentTransfers: row.int(7) ?? 0,
                               leasedTasks: leased)
        }
    }

    /// Ends the server sessions of every node silent for more than `seconds` (the lease timeout),
    /// but those of `instance` (the caller's own process); returns how many it ended.
    ///
    /// A node frozen (SIGSTOP, a paused VM, a partition that keeps its TCP connections open)
    /// keeps its sessions, and with them what it holds outside a transaction: a tenant's creation
    /// turn (a session-level advisory lock) that every node's creations for that tenant wait for,
    /// and a LISTEN that holds back the server's notification queue. Its leases are already
    /// taken back by then, and an open transaction ends by `idle_in_transaction_session_timeout`;
    /// this frees the rest. When it wakes, its statements fail, it connects again, its renewal
    /// finds its leases gone and its fenced writes are refused, as for any lost lease.
    /// Sessions are matched by `application_name` (`PostgresStore.instance`), which names one
    /// process; a session of another role is ended only where the server allows it
    /// (`pg_terminate_backend`: the same role, or `pg_signal_backend`), else this throws.
    public static func endSessions(silentFor seconds: Double, except instance: String, on database: PostgresConnection) throws -> Int {
        try database.run("""
            SELECT pg_terminate_backend(a.pid)
            FROM cluster_nodes n JOIN pg_stat_activity a ON a.application_name = n.instance
            WHERE n.heartbeat_at < now() - make_interval(secs => $1) AND n.instance <> $2
              AND a.datname = current_database() AND a.pid <> pg_backend_pid()
            """, seconds, instance).filter { $0.bool(0) == true }.count
    }

    /// Removes the nodes silent for more than `seconds` (long past the lease timeout); returns
    /// their ids.
    public static func forget(silentFor seconds: Double, on database: PostgresConnection) throws -> [String] {
        try database.run("""
            DELETE FROM cluster_nodes WHERE heartbeat_at < now() - make_interval(secs => $1) RETURNING id
            """, seconds).compactMap { $0.string(0) }.sorted()
    }
}
