/// Where a task's row stands among several daemons sharing the store (issue 19,
/// docs/cluster.md): waiting in the cluster's queue, or held by one node under a lease. Carried
/// by a task write (`StoreOperation.saveTask`, `TaskRow`); the SQLite store, which one daemon
/// alone opens, has no queue and ignores it.
package enum TaskPlacement: Sendable, Equatable {
    /// The row is no node's: in the queue (`queued`, with what admission orders and caps it by),
    /// or out of it (suspended, or completed). Written only while no node holds the row.
    case free(queue: QueueColumns?)
    /// The row is held by the writer under lease `epoch`: written only while the row still
    /// carries that epoch and a holder (the fencing token, docs/cluster.md). With `release` the
    /// write also gives the lease up.
    case held(epoch: Int, release: Release? = nil)

    package enum Release: Sendable, Equatable {
        /// Out of every node's hands and out of the queue: completed, or suspended.
        case unqueued
        /// Back into the queue, at its end, for any node's claim.
        case queued(QueueColumns)
    }
}

/// What the cluster's claim orders a queued task by and caps it with (`Scheduler.Ticket`'s
/// admission fields, as the single daemon's scheduler uses them).
package struct QueueColumns: Sendable, Equatable {
    package var discretionary: Bool
    /// `SchedulingClass.rank`: 0 interactive ... 3 background.
    package var classRank: Int
    package var priority: Double
    /// The key the per-host cap counts by (session and origin), and the cap.
    package var host: String
    package var hostCap: Int
    /// The session's cap on running tasks; nil for none.
    package var sessionCap: Int?

    package init(discretionary: Bool, classRank: Int, priority: Double, host: String, hostCap: Int, sessionCap: Int?) {
        self.discretionary = discretionary
        self.classRank = classRank
        self.priority = priority
        self.host = host
        self.hostCap = hostCap
        self.sessionCap = sessionCap
    }
}
