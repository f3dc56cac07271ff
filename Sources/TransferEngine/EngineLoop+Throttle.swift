internal import Curl

extension EngineLoop {
    /// Unpauses the transfers that waited for tokens and have them again, longest waiting
    /// first. Unpausing a download hands its kept chunk to the write callback at once, which
    /// takes the tokens before the next one is looked at. A client-suspended transfer stays
    /// paused (it left the line when suspended). Returns the seconds until the next transfer
    /// is due, or nil when none waits.
    func releaseThrottled(now: Double) -> Double? {
        let waiting = (transfers.values.filter { $0.throttle.isThrottled && $0.pausedAt == nil } + throttledSegmentWorkers())
            .sorted { ($0.throttle.waitingSince.values.min() ?? now) < ($1.throttle.waitingSince.values.min() ?? now) }
        guard !waiting.isEmpty else { return nil }
        var soonest = Double.infinity
        for transfer in waiting {
            if governor.release(transfer.job.taskId, &transfer.throttle, now: now) {
                try? transfer.handle.pause(false)
            }
            if transfer.throttle.isThrottled { soonest = min(soonest, governor.secondsUntilRelease(transfer.throttle)) }
        }
        // Released transfers run in the next curl_multi_perform, which comes at once.
        return soonest.isFinite ? max(0.001, soonest) : nil
    }

    /// A receive buffer of about a tenth of a second of the lowest rate that applies, so a
    /// limited download moves in small chunks (libcurl cannot change it once the transfer runs;
    /// a limit set later is kept by the buckets' debt instead).
    func sizeReceiveBuffer(_ transfer: Transfer) throws {
        let job = transfer.job
        guard let rate = governor.startingRate(.download, own: job.bandwidthLimit, background: transfer.throttle.background) else { return }
        try transfer.handle.set(.receiveBufferSize(min(512 * 1024, max(16 * 1024, rate / 10))))
    }
}
