/// A store whose queued writes go through a `QueuedWriter` (group commit, settle, retry,
/// health): the write half of `TaskStore`, forwarded here once for the SQLite `Store` and the
/// cluster's PostgreSQL store alike.
package protocol QueuedWrites: AnyObject {
    var writer: QueuedWriter { get }
}

extension QueuedWrites {
    /// Queues a write; returns its sequence number (see `settle`). Never waits.
    @discardableResult
    package func enqueue(_ operation: StoreOperation) -> Int { writer.enqueue(operation) }

    /// Queues writes that commit in the same transaction; returns the last one's sequence number.
    @discardableResult
    package func enqueue(_ operations: [StoreOperation]) -> Int? { writer.enqueue(operations) }

    /// Queues a write that the caller settles at once, without waking the writer.
    package func enqueueForSettle(_ operation: StoreOperation) -> Int { writer.enqueueForSettle(operation) }

    /// Waits until every write queued before the call was tried. Never throws.
    package func flush() { writer.flush() }

    /// Waits like `flush()`, then throws when a write queued before the call is not committed.
    package func commit() throws(StoreFailure) { try writer.commit() }

    package func settle<T>(_ seq: Int?, _ body: (StoreFailure?) -> T) -> T { writer.settle(seq, body) }

    package func withdraw(_ transform: (StoreOperation) -> StoreOperation?) { writer.withdraw(transform) }

    package func afterCommit(_ action: @escaping @Sendable () -> Void) { writer.afterCommit(action) }

    /// Why commits fail now, nil while they succeed.
    package var failure: StoreFailure? { writer.failure }

    /// Whether the store is open (`close()` has not been called).
    package var isOpen: Bool { writer.isOpen }

    /// A write made at once on the caller's thread (blob and credential rows), counted in the
    /// writer's health like its own commits.
    @discardableResult
    package func writeNow<T>(_ body: () throws -> T) throws -> T { try writer.writeNow(body) }
}
