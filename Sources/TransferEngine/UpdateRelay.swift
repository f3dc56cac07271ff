internal import Dispatch
internal import Synchronization

/// Hands the engine's updates to the observer on a thread of its own, in the order they were
/// reported (one queue for every reporting thread: the engine thread, file: copies' threads).
///
/// Why: the observer (the service) records each update under its lock, runs the task's state
/// machine, queues store writes and events, and on a completion admits the next task and builds
/// its job. Done on the engine thread, that was a quarter of its time per 16 KiB download, and
/// every transfer waited for it; here the engine thread goes back to libcurl at once and the two
/// cores work side by side. Updates are delivered in batches: whatever queued while the last
/// batch was delivered. A finished download's file is placed here too, just before its
/// completion is delivered (`FilePlacement`).
final class UpdateRelay: TransferObserver {
    private enum Item {
        case update(taskId: Int, TransferUpdate)
        case place(taskId: Int, FilePlacement)

        /// The task whose transfer this ends: a download to place, or a completion.
        var endedTransfer: Int? {
            switch self {
            case .place(let taskId, _): taskId
            case .update(let taskId, .completed): taskId
            case .update: nil
            }
        }
    }

    private struct Queue {
        var updates: [Item] = []
        var stopping = false
        /// Set while the engine loop takes a turn (`holdUpdates`): nothing queued wakes the thread.
        var held = false
    }

    private let target: any TransferObserver
    private let queue = Mutex(Queue())
    /// Signalled when the queue goes from empty to not empty, and at stop.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled once the thread has delivered everything and ended.
    private let ended = DispatchSemaphore(value: 0)

    init(target: any TransferObserver) {
        self.target = target
        DedicatedThread.start { [self] in run() }
    }

    func transfer(_ taskId: Int, _ update: TransferUpdate) {
        enqueue(.update(taskId: taskId, update))
    }

    func place(_ taskId: Int, _ placement: FilePlacement) {
        enqueue(.place(taskId: taskId, placement))
    }

    private func enqueue(_ item: Item) {
        let wakes = queue.withLock { queue in
            queue.updates.append(item)
            return queue.updates.count == 1 && !queue.held
        }
        if wakes { wake.signal() }
    }

    /// The engine loop's turn begins: what it reports until `releaseUpdates` is handed over
    /// with one wake-up of this thread, not one per update (a 16 KiB download reports five,
    /// and each wake-up is a futex call here and a context switch on a 2-core machine).
    func holdUpdates() {
        queue.withLock { $0.held = true }
    }

    /// The engine loop's turn ends (before it polls): what queued meanwhile is handed over.
    func releaseUpdates() {
        let wakes = queue.withLock { queue in
            queue.held = false
            return !queue.updates.isEmpty
        }
        if wakes { wake.signal() }
    }

    /// Delivers what is queued, then ends the thread; waits up to `timeout` seconds. Call after
    /// the engine thread stopped, so that nothing the engine reported is lost.
    @discardableResult
    func stop(timeout: Double) -> Bool {
        queue.withLock { $0.stopping = true }
        wake.signal()
        return ended.wait(timeout: .now() + timeout) == .success
    }

    private func run() {
        var batch: [Item] = []
        var delivered: [(taskId: Int, update: TransferUpdate)] = []
        while true {
            wake.wait()
            let stopping = queue.withLock { queue in
                swap(&batch, &queue.updates)
                return queue.stopping
            }
            deliver(&batch, &delivered)
            guard !stopping else { break }
        }
        // Anything queued after the stop signal's batch (a late report of a file: copy's thread).
        batch = queue.withLock { queue in
            defer { queue.updates.removeAll() }
            return queue.updates
        }
        deliver(&batch, &delivered)
        ended.signal()
    }

    /// Tells the observer which transfers of the batch ended, places the batch's files (outside
    /// the observer's lock), then hands its updates over in order; empties both buffers,
    /// keeping their capacity.
    ///
    /// Why the ends first: transfers that end in one engine turn come as one batch (sixteen at
    /// a time for 16 KiB downloads), and their slots used to go to the next tasks only once
    /// every file of the batch was placed and its completion recorded. The engine then had no
    /// transfer at all for a quarter of the run, its work and this thread's taking turns
    /// instead of overlapping (issue 18, measured with uprobes on curl_multi_add_handle and
    /// curl_multi_remove_handle).
    private func deliver(_ batch: inout [Item], _ delivered: inout [(taskId: Int, update: TransferUpdate)]) {
        guard !batch.isEmpty else { return }
        let ended = batch.compactMap(\.endedTransfer)
        if !ended.isEmpty { target.transfersEnded(ended) }
        for item in batch {
            switch item {
            case .update(let taskId, let update): delivered.append((taskId, update))
            case .place(let taskId, let placement): delivered.append((taskId, .completed(placement.complete())))
            }
        }
        batch.removeAll(keepingCapacity: true)
        target.transfers(delivered)
        delivered.removeAll(keepingCapacity: true)
    }
}
