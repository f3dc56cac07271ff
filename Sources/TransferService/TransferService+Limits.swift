internal import FoundationEssentials
internal import Synchronization
internal import TransferStore
internal import Logging
public import TransferModel
internal import TransferEngine

extension TransferService {
    /// The daemon-wide rate limits in effect (`GET /v1/limits`).
    public var bandwidthLimits: BandwidthLimits {
        state.withLock { $0.bandwidthLimits }
    }

    /// Changes the daemon-wide rate limits; running transfers follow from their next chunk.
    /// Stored before the answer (`KeptBandwidthLimits`): a restart keeps them, until the
    /// configured limits change.
    @discardableResult
    public func updateBandwidthLimits(_ patch: BandwidthLimitsPatch) throws -> BandwidthLimits {
        let limits = try state.withLock { s throws in
            let limits = patch.applied(to: s.bandwidthLimits)
            let kept = try KeptBandwidthLimits(limits: limits, configured: configuration.bandwidthLimits).json()
            s.bandwidthLimits = limits
            // Under the lock, so the engine and the store see changes in the order they were made.
            engine.submit(.setLimits(limits))
            store.enqueue(.saveSetting(name: KeptBandwidthLimits.setting, json: kept))
            return limits
        }
        try commit(delivering: Deliveries())
        return limits
    }

    /// A daemon-wide setting changed in the store, through another node of the cluster
    /// (`ClusterSignal.setting`) or while this node's listener was away (a resync): the rate
    /// limits are read again, as a start reads them, and the engine follows. Without it a
    /// `PATCH /v1/limits` through one node held on that node only, until the others restarted.
    func settingChanged(_ name: String?) {
        guard name == nil || name == KeptBandwidthLimits.setting else { return }
        let limits = Self.startingBandwidthLimits(store: store, configured: configuration.bandwidthLimits, logger: logger)
        state.withLock { s in
            guard s.bandwidthLimits != limits else { return }
            s.bandwidthLimits = limits
            engine.submit(.setLimits(limits))
        }
    }

    /// The limits to start with: those changed over the API before a restart, unless the
    /// configured ones (flags, environment, file) changed since, which then win.
    static func startingBandwidthLimits(store: any TaskStore, configured: BandwidthLimits, logger: Logger) -> BandwidthLimits {
        do {
            guard let json = try store.setting(KeptBandwidthLimits.setting) else { return configured }
            let kept = try JSONCoding.decoder.decode(KeptBandwidthLimits.self, from: Data(json.utf8))
            return kept.configured == configured ? kept.limits : configured
        } catch {
            logger.warning("the kept rate limits could not be read; starting from the configured ones", metadata: ["error": "\(error)"])
            return configured
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

/// `PATCH /v1/limits`' result as stored, with the configured limits it was made over: a start
/// whose configuration gives other limits takes those (the operator changed them since).
struct KeptBandwidthLimits: Codable, Equatable {
    static let setting = "bandwidth_limits"
    var limits: BandwidthLimits
    var configured: BandwidthLimits

    func json() throws -> String { String(decoding: try JSONCoding.encoder.encode(self), as: UTF8.self) }
}
