internal import Curl

extension EngineLoop {
    /// Adds a transfer to the multi handle, in its session's own connection pool when the
    /// session has one (after a reset or flush, `ConnectionPools`).
    func addToMulti(_ transfer: Transfer) throws {
        if let pool = connectionPools.pool(for: transfer.job.connectionPool) {
            try transfer.handle.set(.share(pool))
        }
        try multi.add(transfer.handle)
        connectionPools.closeUnused()
    }
}
