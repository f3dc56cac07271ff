internal import Logging
internal import TransferModel

/// The session operations of URLSession on the credential store.
extension CredentialStore: SessionScopedStore {
    func reset(session: Session, requester: String?) {
        do {
            try removeAll(CredentialScope(session, requester: requester))
        } catch {
            logger.warning("reset could not delete the stored credentials", metadata: ["transfer.session.id": "\(session.id)"])
        }
    }

    /// Nothing waits: every change is committed before the request that made it is answered.
    func flush() {}

    /// A session's own credentials (forSession, none, and all of an ephemeral session's) go
    /// with it; the shared store stays for the other sessions.
    func discard(session: Session) {
        forget(session: session.id)
    }
}
