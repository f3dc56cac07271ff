internal import FoundationEssentials
public import PostgreSQL
package import TransferModel
package import TransferStore

/// The statements behind `ClusterCoordinator`'s answers for the whole cluster: a tenant's usage,
/// the queue as `GET /v1/queue` lists it, and counts per class. Read-only; each scoped as its
/// caller says (a tenant's own rows and the anonymous ones, `TransferTask.isVisible(to:)`).
enum ClusterOverviewQueries {
    /// Two index ranges for the tasks (the unfinished by owner, migration 7, and the completed by
    /// owner), and the blobs by owner.
    static func usage(owner: String?, on database: PostgresConnection) throws -> StoredUsage {
        let key = TenantUsage.key(owner)
        let row = try database.run("""
            SELECT (SELECT count(*) FROM tasks WHERE owner = $1 AND state <> 'completed'),
                   (SELECT COALESCE(sum(held_bytes), 0)::bigint FROM tasks WHERE owner = $1 AND state <> 'completed')
                 + (SELECT COALESCE(sum(held_bytes), 0)::bigint FROM tasks WHERE owner = $1 AND state = 'completed'),
                   (SELECT COALESCE(sum(size), 0)::bigint FROM blobs WHERE COALESCE(owner, '') = $1)
            """, key).first
        return StoredUsage(unfinishedTasks: row?.int(0) ?? 0, taskBytes: row?.int(1) ?? 0, blobBytes: row?.int(2) ?? 0)
    }

    /// The queued tasks in the claim's order (`ClusterQueue.claim`), numbered over those counted,
    /// each with why it waits: its host or capped session holds as many leases as its cap
    /// allows, it is discretionary, or else every node is full (or about to claim it).
    static func queue(owner: String?, everyone: Bool, limit: Int, on database: PostgresConnection) throws -> StoredQueuePage {
        let key = TenantUsage.key(owner)
        // Without `everyone`, only what the caller may see is numbered and counted.
        let counted = everyone ? "true" : "(owner = '' OR owner = $2)"
        let rows = try database.run("""
            WITH numbered AS (
                SELECT id, owner, record, discretionary, host, host_cap, session_id, session_cap,
                       row_number() OVER (ORDER BY discretionary, class_rank, priority DESC, queue_order) AS position
                FROM tasks WHERE queued AND \(counted)
            ), page AS (
                SELECT * FROM numbered WHERE owner = '' OR owner = $2 ORDER BY position LIMIT $1
            )
            SELECT p.position, p.record, p.discretionary,
                   CASE WHEN (SELECT count(*) FROM tasks t WHERE t.host = p.host AND t.node IS NOT NULL) >= p.host_cap THEN 'hostCap'
                        WHEN p.session_cap IS NOT NULL
                             AND (SELECT count(*) FROM tasks t WHERE t.session_id = p.session_id AND t.node IS NOT NULL) >= p.session_cap
                             THEN 'sessionCap'
                        WHEN p.discretionary THEN 'discretionary'
                        ELSE 'globalCap' END,
                   (SELECT count(*) FROM numbered)
            FROM page p ORDER BY p.position
            """, max(0, limit), key)
        var total = rows.first?.int(4)
        let entries = try rows.compactMap { row -> StoredQueueEntry? in
            guard let position = row.int(0), let waiting = row.string(3) else { return nil }
            return StoredQueueEntry(position: position, task: try StoredRows.task(from: row.data(1)),
                                    discretionary: row.bool(2) ?? false, waitingFor: waiting)
        }
        if total == nil {
            // An empty page (limit 0, or nothing the caller may see): the count alone.
            total = try everyone ? database.run("SELECT count(*) FROM tasks WHERE queued").first?.int(0)
                : database.run("SELECT count(*) FROM tasks WHERE queued AND (owner = '' OR owner = $1)", key).first?.int(0)
        }
        return StoredQueuePage(total: total ?? 0, entries: entries)
    }

    static func classCounts(on database: PostgresConnection) throws -> StoredClassCounts {
        var counts = StoredClassCounts(queued: [:], suspended: 0)
        for row in try database.run("SELECT scheduling_class, count(*) FROM tasks WHERE queued GROUP BY scheduling_class") {
            guard let name = row.string(0) else { continue }
            counts.queued[name] = row.int(1) ?? 0
        }
        // Within the unfinished tasks' index (`tasks_unfinished`), not the whole table.
        counts.suspended = try database.run("""
            SELECT count(*) FROM tasks WHERE state <> 'completed' AND state = 'suspended'
            """).first?.int(0) ?? 0
        return counts
    }
}
