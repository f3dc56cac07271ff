package import TransferModel

/// What a cluster's store says of the whole cluster, for the answers a node cannot give from
/// its memory alone (the queue lives in the store, and a tenant's tasks and blobs are spread
/// over every node): read by `ClusterCoordinator`, each a few statements.

/// What a tenant holds across the cluster, for its quotas (`TenantQuotas`).
package struct StoredUsage: Sendable, Equatable {
    /// Its tasks not completed, wherever they run or wait.
    package var unfinishedTasks: Int
    /// What its tasks keep (the rows' `held_bytes`, `TenantUsage.heldBytes(of:)`).
    package var taskBytes: Int
    /// What its blobs hold.
    package var blobBytes: Int

    package init(unfinishedTasks: Int, taskBytes: Int, blobBytes: Int) {
        self.unfinishedTasks = unfinishedTasks
        self.taskBytes = taskBytes
        self.blobBytes = blobBytes
    }
}

/// A queued task in the cluster's queue, as `GET /v1/queue` lists it.
package struct StoredQueueEntry: Sendable {
    /// 1-based place in admission order among the tasks counted (every tenant's, or the caller's).
    package var position: Int
    package var task: TransferTask
    package var discretionary: Bool
    /// Why no node runs it yet: `hostCap`, `sessionCap`, `discretionary` or `globalCap`.
    package var waitingFor: String

    package init(position: Int, task: TransferTask, discretionary: Bool, waitingFor: String) {
        self.position = position
        self.task = task
        self.discretionary = discretionary
        self.waitingFor = waitingFor
    }
}

package struct StoredQueuePage: Sendable {
    /// The queued tasks counted (every tenant's, or the caller's).
    package var total: Int
    package var entries: [StoredQueueEntry]

    package init(total: Int, entries: [StoredQueueEntry]) {
        self.total = total
        self.entries = entries
    }
}

/// How many tasks of each scheduling class wait in the cluster's queue (by
/// `SchedulingClass.rawValue`), and how many tasks are suspended, on a node or in the store.
package struct StoredClassCounts: Sendable, Equatable {
    package var queued: [String: Int]
    package var suspended: Int

    package init(queued: [String: Int], suspended: Int) {
        self.queued = queued
        self.suspended = suspended
    }
}

/// A page of the cluster's change feed of tasks (`GET /v1/tasks?after=`), read from the store
/// (`ClusterCoordinator.taskChanges`): the tasks changed and removed after the cursor, in stamp
/// order, and where the next page starts.
package struct StoredTaskChanges: Sendable {
    package var tasks: [StoredTaskJSON]
    package var removed: [Int]
    /// The cursor for the next page: the last stamp served when the page is full, otherwise
    /// the highest stamp below which every change is known (nothing can be stamped there later).
    package var next: Int
    /// The cursor is not one this feed gave, or removals after it were forgotten: start over.
    package var resync: Bool
    /// Changes are committed past `next` that wait for an older transaction to end before they
    /// may be served: read again soon rather than wait for a signal.
    package var behind: Bool

    package init(tasks: [StoredTaskJSON], removed: [Int], next: Int, resync: Bool, behind: Bool) {
        self.tasks = tasks
        self.removed = removed
        self.next = next
        self.resync = resync
        self.behind = behind
    }
}
