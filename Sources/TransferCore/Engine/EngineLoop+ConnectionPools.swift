internal import Curl

extension EngineLoop {
    /// Adds a transfer to the multi handle, in its session's own connection pool when the
    /// session has one (after a reset or flush, or from its first transfer when it chose an
    /// HTTP version other than `auto`: `ConnectionPools`).
    func addToMulti(_ transfer: Transfer) throws {
        let key = transfer.job.connectionPool
        let ownsPool = transfer.job.network.httpVersion != .auto
        if let pool = ownsPool ? key.flatMap(connectionPools.ownPool) : connectionPools.pool(for: key) {
            try transfer.handle.set(.share(pool))
        }
        try multi.add(transfer.handle)
        connectionPools.closeUnused()
    }
}
