internal import Curl

extension EngineLoop {
    /// Adds a transfer to the multi handle, in its session's own connection pool
    /// (`ConnectionPools`): a connection one session opened never carries another's request.
    /// A transfer with no pool named (none today but internal ones) uses the multi handle's.
    func addToMulti(_ transfer: Transfer) throws {
        if let key = transfer.job.connectionPool {
            // Out of memory: fail the transfer rather than let it into another session's pool.
            guard let pool = connectionPools.ownPool(for: key, now: Self.now()) else { throw CurlCode.outOfMemory }
            try transfer.handle.set(.share(pool))
        }
        try multi.add(transfer.handle)
        connectionPools.closeUnused()
    }

    /// Closes the pools of sessions that stopped transferring (`ConnectionPools.retireIdle`),
    /// at most once a second.
    func retireIdlePools(now: Double) {
        guard now >= nextPoolSweep else { return }
        nextPoolSweep = now + 1
        connectionPools.retireIdle(now: now)
    }
}
