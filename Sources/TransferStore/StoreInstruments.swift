/// What the store reports about its commits to whoever measures them (the service's
/// `TransferMetrics`: `transferd_store_commit_duration_seconds` and
/// `transferd_store_commit_failures_total`). A protocol so the store depends on no metrics library.
public protocol StoreInstruments: Sendable {
    /// One batch was committed, or failed, after `duration`.
    func storeCommitTook(_ duration: Duration)
    /// A batch could not be committed: `reason` is a `StoreFailure.Kind` or "rejected".
    func storeCommitFailed(reason: String)
}
