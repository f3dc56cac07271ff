internal import Dispatch
package import Logging
internal import Synchronization

/// The queued writer of a store. Many writes share one transaction (group commit), so the engine
/// thread never waits on the disk and a burst of API requests costs one commit. It commits through
/// a `WriteTarget` (SQLite's `SQLiteWrites`; the cluster's PostgreSQL store will be another), so
/// every store keeps the same rules.
///
/// The rule it keeps: what the API answers with a 2xx is committed. A transaction that fails
/// keeps its writes pending, in order, and they are tried again on the next drain (a write never
/// replaces a newer row, `StoreOperation`), so state no client waits on (progress, events,
/// engine outcomes) is not lost while the disk is full; a creation whose write is still pending
/// when its request settles is withdrawn and refused (`settle`). Failures are logged once per
/// burst, counted, and make `GET /readyz` fail until a commit succeeds again; a retry runs every
/// `retryInterval` meanwhile, so recovery needs no client request.
package final class QueuedWriter: Sendable {
    let target: any WriteTarget
    /// Internal, not private, for the tests of failing commits.
    let writes = Mutex(PendingWrites())
    let queue = DispatchQueue(label: "transferd.store.writer")
    /// Whether commits succeed (`GET /readyz`, the error log and the failure counter).
    let health = Mutex(StoreHealth())
    /// Set while a retry of failed writes is scheduled on `queue`.
    let retryScheduled = Atomic<Bool>(false)
    /// Set while a group commit is scheduled on `queue` (`wakeWriter`): writes queued
    /// meanwhile join it instead of scheduling their own.
    let drainScheduled = Atomic<Bool>(false)
    /// What waits for the next drain (`afterCommit`), taken by the drain before its writes.
    let afterDrain = Mutex<[@Sendable () -> Void]>([])
    /// Cleared by `close()`.
    private let open = Atomic<Bool>(true)
    /// Told the time of each batch commit and each failure, when measured.
    let instruments: (any StoreInstruments)?
    let logger: Logger

    /// `groupCommitWindow`: how long a queued write waits for others to share its commit.
    package init(target: any WriteTarget, groupCommitWindow: Duration = .milliseconds(2), instruments: (any StoreInstruments)?, logger: Logger) {
        self.target = target
        let (seconds, attoseconds) = groupCommitWindow.components
        self.groupCommitWindow = .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        self.instruments = instruments
        self.logger = logger
    }

    /// Whether `close()` has not been called.
    package var isOpen: Bool { open.load(ordering: .relaxed) }

    /// Tries what is pending once more, then takes no more commits. Writes that still cannot be
    /// committed are lost with the process; they are counted in an error log line.
    package func close() {
        flush()
        open.store(false, ordering: .relaxed)
        let lost = writes.withLock { $0.items.count }
        if lost > 0 {
            logger.error("store closed with writes it could not commit", metadata: ["store.pending": "\(lost)"])
        }
    }

    /// Queues a write without waking the writer; the caller settles it right away. The settle's
    /// drain then runs on the caller's thread (a `sync` on the idle serial writer runs there),
    /// which saves the wake-up of a writer thread and the wait for it on every single POST
    /// (issue 18: they were most of its latency). Creations that arrive together still share
    /// one transaction: whichever settles first commits everything queued.
    package func enqueueForSettle(_ operation: StoreOperation) -> Int {
        writes.withLock { $0.append(operation) }
    }

    /// How long after a failed commit the writer tries again on its own.
    static let retryInterval: DispatchTimeInterval = .seconds(1)

    /// Queues a write; returns its sequence number (see `settle`). Never waits.
    @discardableResult
    package func enqueue(_ operation: StoreOperation) -> Int {
        let seq = writes.withLock { $0.append(operation) }
        wakeWriter()
        return seq
    }

    /// Queues writes that commit in the same transaction (one drain takes all that is queued);
    /// returns the last one's sequence number.
    @discardableResult
    package func enqueue(_ operations: [StoreOperation]) -> Int? {
        guard !operations.isEmpty else { return nil }
        let seq = writes.withLock { w in operations.map { w.append($0) }.last }
        wakeWriter()
        return seq
    }

    /// A drain for what was just queued, `groupCommitWindow` from now unless one is scheduled
    /// already: writes that arrive together share a transaction (group commit). A 16 KiB
    /// download queues about seven rows in the milliseconds it runs; drained as each came, that
    /// was a commit per download and the same table and index pages written to the WAL again
    /// each time. Nothing that answers a client waits for the window: `commit()`, `flush()` and
    /// `settle` drain at once. While commits fail the retry timer drains instead (and an API
    /// write's own `commit()`): a drain per progress checkpoint would redo the whole failing
    /// batch each time. The recovering drain wakes the writer again (`noteCommit`).
    private func wakeWriter() {
        guard health.withLock({ $0.failure == nil }) else { return }
        scheduleGroupCommit()
    }

    private func scheduleGroupCommit() {
        guard !drainScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.asyncAfter(deadline: .now() + groupCommitWindow) { [self] in drain() }
    }

    /// How long a queued write waits for others to share its commit (the store's choice).
    let groupCommitWindow: DispatchTimeInterval

    /// Waits until the writer has tried every write queued before the call. Never throws: for
    /// readers that only want to see what is committed, and background work.
    package func flush() {
        queue.sync { drain() }
    }

    /// Waits like `flush()`, then throws when a write queued before the call is still not
    /// committed: the API answers a write with a 2xx only after this returns.
    package func commit() throws(StoreFailure) {
        let through = writes.withLock { $0.lastSeq }
        let failure = queue.sync { () -> StoreFailure? in
            drain()
            return writes.withLock { $0.containsAny(through: through) } ? currentFailure : nil
        }
        if let failure { throw failure }
    }

    /// For a creation: drains, then calls `body` on the writer with nil when write `seq` is
    /// committed, or with the failure when it is not (still pending, or rejected). Nothing else
    /// commits while `body` runs, so a refused creation can withdraw its writes (`withdraw`) and
    /// undo its change in memory without a commit slipping in between.
    package func settle<T>(_ seq: Int?, _ body: (StoreFailure?) -> T) -> T {
        queue.sync {
            drain()
            guard let seq else { return body(nil) }
            let refused = writes.withLock { $0.contains(seq) || $0.takeRejection(seq) }
            return body(refused ? currentFailure : nil)
        }
    }

    /// Drops or trims pending writes (`PendingWrites.withdraw`). Only inside `settle`'s body.
    package func withdraw(_ transform: (StoreOperation) -> StoreOperation?) {
        dispatchPrecondition(condition: .onQueue(queue))
        writes.withLock { $0.withdraw(transform) }
    }

    /// Runs `action` (off the writer) once the writer has tried every write queued before the
    /// call: with the next group commit, or at once while commits fail (an answer never waits
    /// for the retry timer).
    package func afterCommit(_ action: @escaping @Sendable () -> Void) {
        guard health.withLock({ $0.failure == nil }) else {
            queue.async { [self] in
                drain()
                DispatchQueue.global().async(execute: action)
            }
            return
        }
        afterDrain.withLock { $0.append(action) }
        scheduleGroupCommit()
    }

    /// Why commits fail now, nil while they succeed.
    package var failure: StoreFailure? { health.withLock { $0.failure } }

    private var currentFailure: StoreFailure {
        failure ?? StoreFailure(kind: .unavailable, reason: isOpen ? "the write was not committed" : "the store is closed")
    }

    /// Commits everything pending in one transaction. Runs only on `queue`. With nothing
    /// pending while commits fail, it writes a probe row instead, so readiness comes back once
    /// the disk takes writes again.
    private func drain() {
        drainScheduled.store(false, ordering: .releasing)
        // Taken before the writes: an action's writes were queued before it was, so they are in
        // this batch (or an earlier one).
        let actions = afterDrain.withLock { actions in
            defer { actions.removeAll() }
            return actions
        }
        defer {
            if !actions.isEmpty { DispatchQueue.global().async { for action in actions { action() } } }
        }
        guard isOpen else { return }
        let batch = writes.withLock { $0.takeAll() }
        guard !batch.isEmpty else {
            if failure != nil { probe() }
            return
        }
        let started = ContinuousClock.now
        defer { instruments?.storeCommitTook(ContinuousClock.now - started) }
        do {
            try target.commit(batch.map(\.operation))
            noteCommit()
        } catch let error where target.isRejection(error) {
            commitOneByOne(batch)
        } catch {
            writes.withLock { $0.putBack(batch) }
            noteFailure(target.failure(of: error))
        }
    }

    /// A batch failed on a row the database refuses whatever the disk does (a bug): each write
    /// is committed alone, so that row cannot keep the others out. The refused one is dropped
    /// (logged and counted); at the first failure of another kind the rest stays pending.
    private func commitOneByOne(_ batch: [PendingWrites.Write]) {
        for (index, write) in batch.enumerated() {
            do {
                try target.commit([write.operation])
            } catch let error where target.isRejection(error) {
                writes.withLock { $0.reject(write.seq) }
                instruments?.storeCommitFailed(reason: "rejected")
                logger.error("store write rejected and dropped", metadata: [
                    "store.operation": "\(write.operation.name)", "store.error": "\(error)",
                ])
            } catch {
                writes.withLock { $0.putBack(batch[index...]) }
                noteFailure(target.failure(of: error))
                return
            }
        }
        noteCommit()
    }

    /// A tiny write that proves the disk takes commits again.
    private func probe() {
        do {
            try target.probe()
            noteCommit()
        } catch {
            noteFailure(target.failure(of: error))
        }
    }

    /// A write made at once on the caller's thread, not queued: blob and credential rows, whose
    /// API answer must wait for them anyway (commit before publish). Its failure is logged,
    /// counted and fails readiness like the writer's; its success ends a burst.
    @discardableResult
    package func writeNow<T>(_ body: () throws -> T) throws -> T {
        do {
            let value = try body()
            noteCommit()
            return value
        } catch let error where !target.isRejection(error) {
            noteFailure(target.failure(of: error))
            throw error
        }
    }

    private func noteCommit() {
        guard case .recovered(let attempts, let duration) = health.withLock({ $0.committed(at: .now) }) else { return }
        // Writes queued while it failed did not wake the writer (`wakeWriter`).
        if writes.withLock({ !$0.items.isEmpty }) { queue.async { [self] in drain() } }
        logger.notice("store commits again", metadata: [
            "store.failed_attempts": "\(attempts)", "store.failing_seconds": "\(duration.components.seconds)",
        ])
    }

    private func noteFailure(_ failure: StoreFailure) {
        let report = health.withLock { $0.failed(failure, at: .now) }
        instruments?.storeCommitFailed(reason: failure.kind.rawValue)
        switch report {
        case .began(let failure), .changed(let failure):
            // Once per burst: every later attempt is only counted, until a commit succeeds.
            logger.error("store cannot commit; writes are refused and /readyz fails until a commit succeeds", metadata: [
                "store.failure": "\(failure.kind.rawValue)", "store.error": "\(failure.reason)",
                "store.pending": "\(writes.withLock { $0.items.count })",
            ])
        case .none, .recovered:
            break
        }
        scheduleRetry()
    }

    /// One retry at a time, `retryInterval` after a failure.
    private func scheduleRetry() {
        guard retryScheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        queue.asyncAfter(deadline: .now() + Self.retryInterval) { [self] in
            retryScheduled.store(false, ordering: .relaxed)
            drain()
        }
    }
}
