internal import Synchronization
public import TransferModel
internal import TransferEngine

extension TransferService {
    /// The daemon-wide rate limits in effect (`GET /v1/limits`).
    public var bandwidthLimits: BandwidthLimits {
        state.withLock { $0.bandwidthLimits }
    }

    /// Changes the daemon-wide rate limits; running transfers follow from their next chunk.
    /// Kept in memory only: a restart starts again from the configuration.
    @discardableResult
    public func updateBandwidthLimits(_ patch: BandwidthLimitsPatch) -> BandwidthLimits {
        state.withLock { s in
            s.bandwidthLimits = patch.applied(to: s.bandwidthLimits)
            // Under the lock, so the engine sees changes in the order they were made.
            engine.submit(.setLimits(s.bandwidthLimits))
            return s.bandwidthLimits
        }
    }

    /// A task's own rate limit changed (PATCH /v1/tasks/{tid}); a running transfer follows at once.
    func setBandwidthLimit(_ s: inout ServiceState, task id: Int, _ patch: BandwidthLimitPatch) {
        guard let entry = s.tasks[id] else { return }
        let limit = patch.applied(to: entry.task.bandwidthLimit ?? .unlimited)
        s.tasks[id]?.task.bandwidthLimit = limit.isUnlimited ? nil : limit
        if entry.inEngine { engine.submit(.setBandwidthLimit(taskId: id, s.tasks[id]?.task.bandwidthLimit)) }
    }
}
