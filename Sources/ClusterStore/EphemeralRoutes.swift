public import PostgreSQL

/// Where an ephemeral session and its tasks live (issue 19). An ephemeral session is never
/// stored (its tasks, events, bodies, cookies, credentials and cache stay in its node's memory,
/// as URLSession's ephemeral configuration keeps them off the disk), so another node finds
/// nothing of it in the store. A row here names only the node that holds one: the session id or
/// the task id and the node, nothing of the tenant's data, so another node can pass a request
/// for it on (`NodeForwarding`) and the holder answers it under the same token checks.
///
/// Keys: `s SESSION` and `t TASK`. Rows go with their node's registry row (a cascade when it
/// leaves or is forgotten) and when it registers again. The writes are soft state, committed
/// without waiting for the WAL flush: a row lost in a database crash costs a 404 from another
/// node, never a wrong answer, as the holder checks every request it is passed.
public enum EphemeralRoutes {
    /// Routes session `session` and its tasks `tasks` to `node` (again: idempotent).
    public static func route(session: String, tasks: [Int], node: String, on database: PostgresConnection) throws {
        let keys = ["s \(session)"] + tasks.map { "t \($0)" }
        try database.transaction { tx in
            try tx.run("SET LOCAL synchronous_commit TO off")
            try tx.run("""
                INSERT INTO ephemeral_routes (key, session_id, node) SELECT k, $2, $3 FROM unnest($1::text[]) AS k
                ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, node = excluded.node
                """, PostgresArrays.texts(keys), session, node)
        }
    }

    /// The address of the live node other than `node` that holds session `session` (or, with
    /// `task`, that task); nil when none does. Live: heard from within `seconds`.
    public static func holder(session: String?, task: Int?, except node: String, within seconds: Double,
                              on database: PostgresConnection) throws -> String? {
        let key: String
        if let task { key = "t \(task)" } else if let session { key = "s \(session)" } else { return nil }
        return try database.run("""
            SELECT n.address FROM ephemeral_routes r JOIN cluster_nodes n ON n.id = r.node
            WHERE r.key = $1 AND r.node <> $2 AND n.heartbeat_at > now() - make_interval(secs => $3)
            """, key, node, seconds).first?.string(0)
    }

    /// The addresses of the live nodes other than `node` that hold ephemeral sessions, for a
    /// list of sessions, which asks each of them for its own.
    public static func holders(except node: String, within seconds: Double, on database: PostgresConnection) throws -> [String] {
        try database.run("""
            SELECT n.address FROM cluster_nodes n
            WHERE n.id <> $1 AND n.heartbeat_at > now() - make_interval(secs => $2)
              AND EXISTS (SELECT 1 FROM ephemeral_routes r WHERE r.node = n.id AND r.key LIKE 's %')
            ORDER BY n.id
            """, node, seconds).compactMap { $0.string(0) }
    }
}
