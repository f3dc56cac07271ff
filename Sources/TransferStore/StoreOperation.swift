package import FoundationEssentials
package import TransferModel

/// One durable change, queued to the store's writer. Rows carry their version, and the writer
/// never replaces a row with an older version, so the order in which two threads queue their
/// snapshots cannot make the database go back in time.
package enum StoreOperation: Sendable {
    case saveSession(Session)
    /// A task's row; `feedSeq` is the change feed's stamp of this version (`TaskChangeLog`);
    /// `placement` its place in a cluster's queue and leases (nil: none, one daemon).
    case saveTask(TransferTask, requestBody: Data?, feedSeq: Int = 0, placement: TaskPlacement? = nil)
    /// New tasks created together (a batch): one operation, so they commit all or none.
    case saveTasks([TaskRow])
    case saveBody(taskId: Int, body: Data)
    /// A completed task's metrics (`TaskMetrics`), kept until the task is deleted.
    case saveMetrics(taskId: Int, metrics: TaskMetrics)
    case appendEvent(TaskEvent)
    /// Forget a session's events older than `oldestKept` (the oldest its feed keeps).
    case pruneEvents(sessionId: String, oldestKept: Int)
    /// Delete a session's events up to and including `seq` (the client acknowledged them).
    case deleteEvents(sessionId: String, through: Int)
    /// Keep a session's webhook secret (apart from its served record, which must never hold it).
    case saveWebhookSecret(sessionId: String, secret: String)
    /// Removes a task and its response body; its id stays taken.
    case deleteTask(id: Int)
    /// Records that `id` was given (to a task that is not stored), so it is never given again.
    case reserveTaskId(Int)
    /// Records that the change feed may hand out stamps up to `through` (`feedSeqFloor`).
    case reserveFeedSeqs(through: Int)
    /// Changes to the persistent cookie jars (`Store+Cookies`).
    case cookies([CookieRowChange])
    /// A daemon-wide setting changed over the API (`PATCH /v1/limits`), as JSON, by name. Not a
    /// tenant's: only admin routes write one, and every token may read what they set.
    case saveSetting(name: String, json: String)
}

extension StoreOperation {
    /// A task and its request body, as `saveTasks` writes them.
    package struct TaskRow: Sendable {
        package let task: TransferTask
        package let requestBody: Data?
        package let feedSeq: Int
        package let placement: TaskPlacement?

        /// The memberwise initializer, for the layers above.
        package init(task: TransferTask, requestBody: Data? = nil, feedSeq: Int = 0, placement: TaskPlacement? = nil) {
            self.task = task
            self.requestBody = requestBody
            self.feedSeq = feedSeq
            self.placement = placement
        }
    }
}
