package import FoundationEssentials
package import TransferModel

/// What the daemons sharing a store agree on through it (issue 19, docs/cluster.md): numbers
/// none of them hands out twice, and the queue of tasks with the leases that say which node runs
/// each. Only a store several daemons open has one (`PostgresStore`); with the SQLite store the
/// service counts its own numbers and queues in memory.
///
/// Every call is a round trip to the database on a connection of the coordinator's own; the
/// service makes them outside its lock, except `numbers`, which it takes under the lock once
/// per block (a block covers `numberBlock` or more numbers).
package protocol ClusterCoordinator: Sendable {
    /// A block of at least `count` numbers of `sequence`, ascending and contiguous, that no node
    /// was or will be given.
    func numbers(_ sequence: SharedSequence, count: Int) throws -> Range<Int>
    /// Leases up to `limit` queued tasks to `node` in admission order within the cluster-wide
    /// caps, with their rows.
    func claim(node: String, limit: Int, leaseSeconds: Double) throws -> [ClaimedTask]
    /// As `claim`, only tasks of a class earlier than background and not discretionary: what a
    /// full node takes to preempt its background transfers for.
    func claimForPreemption(node: String, limit: Int, leaseSeconds: Double) throws -> [ClaimedTask]
    /// Leases task `id` to `node` whatever the caps, if no node holds it (a command on a queued
    /// or suspended task, or a task that must run where it was created); nil when a node holds
    /// it or it is gone.
    func take(id: Int, node: String, leaseSeconds: Double) throws -> ClaimedTask?
    /// Extends every lease `node` holds; returns the epoch of each by task id. A lease missing
    /// from the answer was taken over: the node must stop that task.
    func renew(node: String, leaseSeconds: Double) throws -> [Int: Int]
    /// Puts the tasks whose lease expired back in the queue; returns their ids.
    func requeueExpired() throws -> [Int]
    /// Ends the database sessions of the nodes silent for more than `seconds` (a frozen node's
    /// locks held outside a transaction, `ClusterNodes.endSessions`); returns how many.
    func endSessions(ofNodesSilentFor seconds: Double) throws -> Int
    /// Puts every task `node` holds back in the queue (its previous run's, at its start).
    func requeueAll(of node: String) throws -> [Int]
    /// Puts the tasks among `ids` that `node` holds back in the queue.
    func requeue(ids: [Int], of node: String) throws -> [Int]
    /// Which node holds task `id` now; nil when none does.
    func holder(of id: Int) throws -> String?
    /// How many tasks wait in the queue.
    func queuedCount() throws -> Int
    /// The stored sessions among `ids` (made on other nodes, for the tasks a claim brings).
    func sessions(ids: [String]) throws -> [Session]
    /// Up to `limit` stored sessions made after creation number `mark`, in creation order, and
    /// the number of the last one (`mark` when none).
    func sessions(createdAfter mark: Int, limit: Int) throws -> (sessions: [Session], mark: Int)
    /// Writes `session` (invalidated, its next version) only while the stored row is still
    /// invalidating: of nodes ending one session's invalidation at once, exactly one gets true.
    func finishInvalidation(of session: Session) throws -> Bool
    /// How many of a session's stored tasks have not completed (every node's, and the queue's).
    func unfinishedTaskCount(session: String) throws -> Int
    /// A page of a session's stored tasks of any state (queued ones, and those other nodes
    /// hold, are not in this node's memory), ids above `after`, in id order, at most `limit`.
    func tasks(session: String, after: Int, limit: Int) throws -> [StoredTaskJSON]

    // MARK: the cluster as a whole (`ClusterOverview`)

    /// What `owner` (nil: the anonymous user) holds across the cluster, for its quotas.
    func usage(owner: String?) throws -> StoredUsage
    /// Waits until no other node is between reading `owner`'s usage and committing its
    /// creations (`usage`), and holds that turn until `endTenantCreations`: so a task quota
    /// cannot be passed by two nodes creating for one tenant at once. Throws when the store
    /// cannot be reached or the turn does not come within a few seconds.
    func beginTenantCreations(owner: String?) throws
    /// Gives the turn `beginTenantCreations` took back.
    func endTenantCreations(owner: String?)
    /// The first `limit` queued tasks `owner` may see, in admission order. Positions and the
    /// total count every queued task when `everyone` (an admin), else only those it may see.
    func queue(owner: String?, everyone: Bool, limit: Int) throws -> StoredQueuePage
    /// How many tasks of each class wait in the queue, and how many are suspended.
    func classCounts() throws -> StoredClassCounts
    /// A page of the change feed of every task `owner` may see, after the cursor `after`
    /// (every node's, in commit order: `ClusterTaskFeed`).
    func taskChanges(after: Int, limit: Int, owner: String?) throws -> StoredTaskChanges

    // MARK: webhooks (one node posts a session's events at a time)

    /// Makes `node` the poster of session `id`'s webhook for `leaseSeconds` unless another node
    /// is; returns the shared delivered cursor, or nil when another node posts it.
    func takeWebhook(session id: String, node: String, leaseSeconds: Double) throws -> Int?
    /// Moves the shared cursor to `through` while `node` posts the session; false otherwise.
    func advanceWebhook(session id: String, node: String, through: Int) throws -> Bool
    /// `node` has nothing left to post for the session: another node may take it at once.
    func releaseWebhook(session id: String, node: String) throws
    /// Sessions whose webhook is behind its feed and that no node posts now.
    func webhooksBehind() throws -> [String]
    /// The secret of session `id`'s webhook; nil when it has none.
    func webhookSecret(session id: String) throws -> String?

    // MARK: feeds and signals

    /// Up to `limit` rows' worth of a session's committed events after `after`, in feed order.
    /// In a cluster the store numbers a session's events when it commits them, so the numbers
    /// follow commit order and a reader after N never misses one committed later below N.
    func events(session: String, after: Int, limit: Int) throws -> [TaskEvent]
    /// The number of a session's newest committed event (0 when it has none).
    func newestEventSeq(session: String) throws -> Int
    /// Starts listening for the other nodes' signals (and this node's own) on a connection of
    /// its own; `handle` runs on the listener's thread and must not block for long.
    func listen(_ handle: @escaping @Sendable (ClusterHeard) -> Void) throws -> any ClusterListening

    // MARK: commands between nodes

    /// Records a command for the task `node` holds and signals that node; returns its id.
    func sendCommand(task: Int, node: String, owner: String?, command: String) throws -> Int
    /// Takes the commands for `node` no one took yet (each is handed out once), oldest first.
    func takeCommands(node: String) throws -> [ClusterCommandRow]
    /// Stores a command's answer and signals it.
    func answerCommand(id: Int, answer: String) throws
    /// A command's answer, once given; the row is removed when the answer is read.
    func answer(ofCommand id: Int) throws -> String?
    /// Withdraws a command its holder has not taken; false when it was taken (its answer will come).
    func withdrawCommand(id: Int) throws -> Bool

    // MARK: ephemeral sessions (never stored)

    /// Names `node` as where ephemeral session `session` and its tasks `tasks` live, so the
    /// other nodes can pass requests for them on. Ids only, no tenant's data.
    func routeEphemeral(session: String, tasks: [Int], node: String) throws
    /// The address of the live node, other than `node`, holding ephemeral session `session` (or
    /// `task`, when given); nil when no other node does.
    func ephemeralHolder(session: String?, task: Int?, except node: String, liveWithin seconds: Double) throws -> String?
    /// The addresses of the live nodes, other than `node`, that hold ephemeral sessions.
    func ephemeralHolders(except node: String, liveWithin seconds: Double) throws -> [String]
}

/// The numbers the nodes of a cluster hand out from one sequence each.
package enum SharedSequence: String, Sendable {
    case taskIds = "task_ids"
    case eventSeqs = "event_seqs"
}

/// A task a claim or a take leased to the node: its row, and the lease's epoch.
package struct ClaimedTask: Sendable {
    package let task: TransferTask
    package let requestBody: Data?
    package let epoch: Int

    package init(task: TransferTask, requestBody: Data?, epoch: Int) {
        self.task = task
        self.requestBody = requestBody
        self.epoch = epoch
    }
}
