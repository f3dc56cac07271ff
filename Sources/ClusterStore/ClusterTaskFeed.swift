public import PostgreSQL
package import TransferModel
package import TransferStore

/// The change feed of tasks across a cluster (`GET /v1/tasks?after=`, docs/cluster.md): every
/// task row's `feed_seq` is a stamp of its writer's transaction (`GatheredRows.stamp`: the
/// transaction id shifted left by `stampBits`, plus its place in the commit), and a deletion
/// leaves a tombstone with such a stamp (`task_removals`).
///
/// Transaction ids do not commit in order, so a reader serves only the stamps below a horizon:
/// the oldest transaction of this database still running in its snapshot (`horizon`), or the
/// snapshot's next id when none is. Every transaction of this database below it has ended, and
/// any commit to come has an id at or above it, so a stamp below the horizon is final and a
/// cursor there never has a change slip in behind it. No lock is shared between the nodes'
/// commits for this (a counter row would make every commit in the cluster take turns). A change
/// waits to be served for as long as an older transaction of this database runs; the writers'
/// are a commit long. (The snapshot's own `xmin` would also wait for every other database's
/// transactions on the server: a long one elsewhere would stop the feed.)
///
/// Scoped as every read of the store: the caller's own rows and the anonymous ones, each an
/// index range of `tasks_feed` and `task_removals_by_owner` (migration 8).
enum ClusterTaskFeed {
    /// Room in a stamp for a commit's rows: 2^20 stamps per transaction.
    static let stampBits = 20
    /// Tombstones kept; a cursor older than the newest one forgotten starts over (`resync`).
    static let removalsKept = 100_000

    static func changes(after: Int, limit: Int, owner: String?, on database: PostgresConnection) throws -> StoredTaskChanges {
        let limit = max(1, limit)
        let owners = [""] + (owner.map { $0.isEmpty ? [] : [$0] } ?? [])
        let before = try ours(on: database)
        return try database.transaction(isolation: .repeatableRead) { tx in
            // The transaction's snapshot, the same for every statement below: its next id and
            // the ids it sees running.
            guard let bounds = try tx.run("""
                SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
                       COALESCE((SELECT value FROM counters WHERE name = 'removals_forgotten'), 0),
                       ARRAY(SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) AS x)::text
                """).first, let xmax = bounds.int(0) else {
                throw PostgresError(sqlState: "", message: "the snapshot's bounds were not read", context: "")
            }
            let running = PostgresArrays.integers(from: bounds.string(2))
            // Running here: one this database ran before the snapshot, or one begun since the
            // first look (which may be this database's; counted as if it were).
            let mine = running.filter { $0 >= before.next || before.running.contains($0 & 0xFFFF_FFFF) }
            let horizon = (mine.min() ?? xmax) << stampBits
            // A cursor at or past the next transaction's stamps was not given by this feed.
            let resync = after >= xmax << stampBits || (after > 0 && after < (bounds.int(1) ?? 0))
            var changes: [(seq: Int, task: StoredTaskJSON?, removed: Int?)] = []
            var behind = false
            for owner in owners {
                for row in try tx.run("""
                    SELECT \(StoredRows.servedColumns), feed_seq FROM tasks
                    WHERE owner = $1 AND feed_seq > $2 AND feed_seq < $3 ORDER BY feed_seq LIMIT $4
                    """, owner, after, horizon, limit) {
                    guard let seq = row.int(6) else { continue }
                    changes.append((seq, try StoredRows.served(row), nil))
                }
                for row in try tx.run("""
                    SELECT feed_seq, task_id FROM task_removals
                    WHERE owner = $1 AND feed_seq > $2 AND feed_seq < $3 ORDER BY feed_seq LIMIT $4
                    """, owner, after, horizon, limit) {
                    guard let seq = row.int(0), let id = row.int(1) else { continue }
                    changes.append((seq, nil, id))
                }
            }
            changes.sort { $0.seq < $1.seq }
            let full = changes.count >= limit
            // Only an empty page waits; it asks whether changes wait behind the horizon.
            for owner in owners where changes.isEmpty && !behind {
                behind = try tx.run("""
                    SELECT EXISTS (SELECT 1 FROM tasks WHERE owner = $1 AND feed_seq >= $2)
                        OR EXISTS (SELECT 1 FROM task_removals WHERE owner = $1 AND feed_seq >= $2)
                    """, owner, horizon).first?.bool(0) ?? false
            }
            if full { changes.removeLast(changes.count - limit) }
            let next = full ? changes[limit - 1].seq : max(after, horizon - 1)
            return StoredTaskChanges(tasks: changes.compactMap(\.task), removed: changes.compactMap(\.removed),
                                     next: resync ? after : next, resync: resync, behind: behind && !full)
        }
    }

    /// The ids (32-bit, as `pg_stat_activity` shows them) of this database's transactions
    /// running now, and the next id to be given: read before the feed's snapshot, so a
    /// transaction the snapshot sees running is either among them or began after `next`. When
    /// the nodes' role may not see another role's sessions in this database, `next` is 0: every
    /// transaction the snapshot sees running holds the horizon, as the snapshot's `xmin` would.
    private static func ours(on database: PostgresConnection) throws -> (running: Set<Int>, next: Int) {
        guard let row = try database.run("""
            SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
                   ARRAY(SELECT backend_xid::text FROM pg_stat_activity
                         WHERE datname = current_database() AND backend_xid IS NOT NULL)::text,
                   EXISTS (SELECT 1 FROM pg_stat_activity
                           WHERE datname = current_database() AND query = '<insufficient privilege>')
            """).first, let next = row.int(0) else {
            throw PostgresError(sqlState: "", message: "the running transactions were not read", context: "")
        }
        // Another role's sessions hide their transaction ids: every running one counts then.
        if row.bool(2) == true { return ([], 0) }
        return (Set(PostgresArrays.integers(from: row.string(1))), next)
    }

    /// Keeps the newest `removalsKept` tombstones and records the newest stamp dropped.
    static func forgetOldRemovals(on database: PostgresConnection) throws {
        try database.run("""
            WITH cut AS (SELECT feed_seq FROM task_removals ORDER BY feed_seq DESC OFFSET $1 LIMIT 1),
                 gone AS (DELETE FROM task_removals WHERE feed_seq <= (SELECT feed_seq FROM cut) RETURNING feed_seq)
            UPDATE counters SET value = GREATEST(value, (SELECT max(feed_seq) FROM gone))
            WHERE name = 'removals_forgotten' AND EXISTS (SELECT 1 FROM gone)
            """, removalsKept)
    }
}
