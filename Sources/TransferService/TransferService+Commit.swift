internal import TransferStore

extension TransferService {
    /// The end of an API write: waits until what it queued is committed, throwing the store's
    /// failure (507/503) when it is not. `deliveries` (the long-polls the change answers) run
    /// either way: the change was made in memory, and a held poll must not hang on a full disk.
    func commit(delivering deliveries: Deliveries) throws {
        defer { deliveries.run() }
        try store.commit()
    }
}
