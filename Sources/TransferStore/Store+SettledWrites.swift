internal import Synchronization

/// Writes whose caller waits for them at once (`settle`): a creation's rows.
extension Store {
    /// Queues a write without waking the writer; the caller settles it right away. The settle's
    /// drain then runs on the caller's thread (a `sync` on the idle serial writer runs there),
    /// which saves the wake-up of a writer thread and the wait for it on every single POST
    /// (issue 18: they were most of its latency). Creations that arrive together still share
    /// one transaction: whichever settles first commits everything queued.
    package func enqueueForSettle(_ operation: StoreOperation) -> Int {
        writes.withLock { $0.append(operation) }
    }
}
