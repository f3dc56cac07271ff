/// What a `QueuedWriter` commits through: one database's transactions. The SQLite store's is
/// `SQLiteWrites`; the cluster's PostgreSQL store (issue 19, docs/cluster.md) implements the
/// same, so both keep one writer's rules (group commit, settle, retry, health).
package protocol WriteTarget: Sendable {
    /// Writes `operations` in order in one transaction: all of them or none.
    func commit(_ operations: [StoreOperation]) throws
    /// A tiny write that proves the database takes commits again, after failures.
    func probe() throws
    /// What a failed commit's error means for the API and `GET /readyz`.
    func failure(of error: any Error) -> StoreFailure
    /// Whether retrying what threw `error` can never succeed (a row the database refuses
    /// whatever the disk does). Anything unsure is a failure to retry, never a rejection.
    func isRejection(_ error: any Error) -> Bool
}
