package import FoundationEssentials
package import TransferModel

/// The durable state of transferd as the layers above use it: sessions, tasks, events, response
/// bodies, metrics, cookies, credentials, URL cache rows, webhook secrets and blob rows. `Store`
/// is its SQLite implementation; a PostgreSQL one (issue 19) implements the same protocol, and
/// the service and the blob store hold only `any TaskStore`.
///
/// Written for a store that several daemons may share, so nothing in it assumes this process
/// is the only writer:
/// - Writes are queued operations (`StoreOperation`) committed in order, many per transaction.
///   A task's or a session's row is replaced only by a higher `version` (the upsert's WHERE),
///   so a late or repeated write never overwrites a newer one, whichever process sends it.
/// - `commit()` is the durability point: the API answers a write with a 2xx only after it.
/// - Reads run on their own connections and never wait behind a writer's transaction; they see
///   what was committed before they began (callers `flush()` first to read their own writes).
/// - Task ids are reserved in the store (`StoreOperation.reserveTaskId`, `maxTaskId`), so no
///   restart hands an id out twice.
/// A store several daemons share also has a `ClusterCoordinator` (the queue, leases and shared
/// numbers); with it the service holds only the tasks it leases. Without it (SQLite) the service
/// keeps sessions and unfinished tasks in memory as the authority, loaded once at start
/// (completed tasks are read from here once their completion is committed), and counts task
/// ids and event sequence numbers from `maxTaskId` and `maxEventSeq`.
/// Rows are partitioned per tenant by the owner each row carries (sessions, tasks, blobs,
/// cookies, credentials); the URL cache's key holds its partition (`CachePartition`).
package protocol TaskStore: AnyObject, Sendable {
    /// Where the state lives, for logs: a file path, or a database URL without its password.
    var location: String { get }

    // MARK: queued writes

    /// Queues a write; returns its sequence number (`settle`). Never waits.
    @discardableResult
    func enqueue(_ operation: StoreOperation) -> Int
    /// Queues writes that commit in one transaction; returns the last one's sequence number.
    @discardableResult
    func enqueue(_ operations: [StoreOperation]) -> Int?
    /// Queues a write that the caller settles at once (`settle`), without waking the writer.
    func enqueueForSettle(_ operation: StoreOperation) -> Int
    /// Waits until every write queued before the call was tried. Never throws.
    func flush()
    /// Waits like `flush()`, then throws when a write queued before the call is not committed.
    func commit() throws(StoreFailure)
    /// For a creation: calls `body` with nil once write `seq` is committed, or with the failure
    /// that keeps it pending; nothing else commits while `body` runs (it may `withdraw`).
    func settle<T>(_ seq: Int?, _ body: (StoreFailure?) -> T) -> T
    /// Drops or trims pending writes. Only inside `settle`'s body.
    func withdraw(_ transform: (StoreOperation) -> StoreOperation?)
    /// Runs `action` once every write queued before the call was tried.
    func afterCommit(_ action: @escaping @Sendable () -> Void)
    /// Why commits fail now; nil while they succeed (`GET /readyz`).
    var failure: StoreFailure? { get }

    // MARK: reads

    /// Every stored session, in creation order.
    func loadSessions() throws -> [Session]
    /// Every stored task, with its request body.
    func loadTasks() throws -> [(TransferTask, Data?)]
    /// Every task that has not completed, with its request body, in id order.
    func loadUnfinishedTasks() throws -> [(TransferTask, Data?)]
    /// One task by id (any state), with its feed stamp.
    func storedTask(id: Int) throws -> (task: TransferTask, feedSeq: Int)?
    /// One task's served JSON by id (any state).
    func storedTaskJSON(id: Int) throws -> StoredTaskJSON?
    /// A session's completed tasks with ids above `after`, in id order, at most `limit`.
    func completedTasks(session: String, after: Int, limit: Int) throws -> [StoredTaskJSON]
    /// Completed tasks stamped in `after+1...through`, oldest first, that `owner` may see.
    func completedChanges(after: Int, through: Int, owner: String?, limit: Int) throws -> [(seq: Int, task: StoredTaskJSON)]
    /// Completed tasks that completed before `date`, oldest first, at most `limit`.
    func tasksCompleted(before date: Date, limit: Int) throws -> [TransferTask]
    /// The completed tasks per owner, kind and class, and the bytes they keep.
    func completedTaskSummary() throws -> [CompletedTaskSummary]
    /// Above every change-feed stamp a previous run handed out.
    func feedSeqFloor() throws -> Int
    /// Which of `ids` have a row.
    func existingTaskIds(among ids: [Int]) throws -> Set<Int>
    /// The newest `limit` events of every session, oldest first.
    func loadRecentEvents(limit: Int) throws -> [TaskEvent]
    /// The highest task id ever given, deleted tasks included.
    func maxTaskId() throws -> Int
    /// The highest event sequence number ever stored.
    func maxEventSeq() throws -> Int
    /// A completed task's response body, once committed.
    func body(taskId: Int) throws -> Data?
    /// A completed task's metrics, once committed.
    func metrics(taskId: Int) throws -> TaskMetrics?
    /// Every cookie not expired at `now`, by owner key; expired rows are deleted.
    func loadCookies(now: Date) throws -> [String: [Cookie]]
    /// Every session's webhook secret, by session id.
    func loadWebhookSecrets() throws -> [String: String]
    /// A daemon-wide setting's JSON (`StoreOperation.saveSetting`), nil when never saved.
    func setting(_ name: String) throws -> String?

    // MARK: rows written at once (their API answer waits for them anyway)

    func loadCredentialRows() throws -> [Store.CredentialRow]
    func replaceCredential(_ row: Store.CredentialRow) throws
    func deleteCredentials(owner: String, _ ids: [Credential.ID]) throws

    func loadURLCacheRows() throws -> [Store.URLCacheRow]
    func saveURLCacheRow(_ row: Store.URLCacheRow) throws
    func updateURLCacheResponse(file: String, _ response: CachedResponse, lastUsed: Double) throws
    func touchURLCacheRow(file: String, lastUsed: Double) throws
    func deleteURLCacheRow(file: String) throws

    func loadBlobs() throws -> [Blob]
    func blob(id: String) throws -> Blob?
    func insertBlob(_ blob: Blob) throws
    func deleteBlob(id: String) throws

    // MARK: the cluster

    /// The registry of the daemons sharing this store; nil for a store only one daemon opens.
    var nodeRegistry: (any NodeRegistry)? { get }
    /// The queue, leases and shared numbers of the daemons sharing this store; nil for a store
    /// only one daemon opens (the service then queues in memory and counts its own numbers).
    var coordinator: (any ClusterCoordinator)? { get }

    // MARK: life

    /// Whether `close()` has not been called.
    var isOpen: Bool { get }
    /// Commits what is pending and closes. Idempotent.
    func close()
}

extension Store: TaskStore {
    package var location: String { path }
    /// One daemon per data folder: no registry.
    package var nodeRegistry: (any NodeRegistry)? { nil }
    package var coordinator: (any ClusterCoordinator)? { nil }
}
