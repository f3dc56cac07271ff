public import PostgreSQL

/// Webhooks across a cluster (`webhook_cursors`, migration 9): one node at a time posts a
/// session's events, the one holding the session's delivery lease, from the store's feed after
/// the shared cursor; any node takes the lease once it is free or expired (its node stopped).
/// A delivery in flight when its node's lease runs out may be posted again by the next node:
/// at least once, each event with its feed number for the receiver to recognise.
///
/// Nothing here is a tenant's beyond the session id; the events posted are the session's
/// (the session's owner chose the URL), and each connection passes the network policy as on a
/// daemon alone (`WebhookDeliverer`).
public enum ClusterWebhooks {
    /// Makes `node` the poster of session `id` for `leaseSeconds` when no other node is;
    /// returns the delivered cursor, or nil when another node posts it now.
    public static func take(session id: String, node: String, leaseSeconds: Double, on database: PostgresConnection) throws -> Int? {
        try database.run("""
            INSERT INTO webhook_cursors (session_id, node, lease_expires) VALUES ($1, $2, now() + make_interval(secs => $3))
            ON CONFLICT (session_id) DO UPDATE SET node = excluded.node, lease_expires = excluded.lease_expires
            WHERE webhook_cursors.node IS NULL OR webhook_cursors.node = excluded.node OR webhook_cursors.lease_expires < now()
            RETURNING delivered_through
            """, id, node, leaseSeconds).first?.int(0)
    }

    /// Moves the cursor to `through` (a delivery posted, or given up), while `node` posts the
    /// session; false when it no longer does (another node took over: its cursor stands).
    public static func advance(session id: String, node: String, through: Int, on database: PostgresConnection) throws -> Bool {
        try !database.run("""
            UPDATE webhook_cursors SET delivered_through = GREATEST(delivered_through, $3) WHERE session_id = $1 AND node = $2
            RETURNING session_id
            """, id, node, through).isEmpty
    }

    /// Lets go of the session (nothing left to post): the next event's node may take it at once.
    public static func release(session id: String, node: String, on database: PostgresConnection) throws {
        try database.run("UPDATE webhook_cursors SET node = NULL, lease_expires = NULL WHERE session_id = $1 AND node = $2", id, node)
    }

    /// Sessions with a webhook whose feed is past its cursor and that no node posts now (their
    /// node stopped, or the signal of their last events was missed).
    public static func behind(on database: PostgresConnection) throws -> [String] {
        try database.run("""
            SELECT w.session_id FROM webhook_secrets w
            JOIN event_feeds f ON f.session_id = w.session_id
            LEFT JOIN webhook_cursors c ON c.session_id = w.session_id
            WHERE f.seq > COALESCE(c.delivered_through, 0) AND (c.node IS NULL OR c.lease_expires < now())
            ORDER BY w.session_id
            """).compactMap { $0.string(0) }
    }

    /// The secret session `id`'s webhook signs with; nil when it has none.
    public static func secret(session id: String, on database: PostgresConnection) throws -> String? {
        try database.run("SELECT secret FROM webhook_secrets WHERE session_id = $1", id).first?.string(0)
    }
}
