internal import TransferModel

/// Something kept per session beside its tasks: its cookies, its cached responses, its
/// credentials. Default sessions share one persistent instance; an ephemeral session's part lives
/// in memory and is private to it.
///
/// `TransferService.sessionScopedStores` lists them, so the session operations reach all alike:
/// reset empties a session's part, flush writes what is held in memory, and an invalidated
/// ephemeral session's part is dropped.
protocol SessionScopedStore: Sendable {
    /// URLSession's reset: empties what this session sees (for a default session, the shared
    /// store) and deletes its files. `requester` is the token's owner asking: a store
    /// partitioned per tenant empties only that tenant's part (the shared session has no owner).
    func reset(session: Session, requester: String?)
    /// URLSession's flush: what is pending reaches the disk (nothing for ephemeral sessions).
    func flush()
    /// The session is invalidated: an ephemeral session's private part goes.
    func discard(session: Session)
}
