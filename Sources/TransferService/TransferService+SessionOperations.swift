internal import Synchronization
public import TransferModel
internal import TransferStore
internal import TransferEngine

extension TransferService {
    /// URLSession's reset: empties the cookies, cache and credentials the session sees (for a
    /// default session the shared stores) and deletes their files; the session's future
    /// requests use new connections. Running tasks go on as they are.
    public func reset(session id: String, owner: String?) throws -> Session {
        let session = try operable(session: id, owner: owner, operation: "reset")
        for store in sessionScopedStores { store.reset(session: session, requester: owner) }
        return session
    }

    /// URLSession's flush: what the stores hold in memory reaches the disk, pending store writes
    /// are committed, and the session's future requests use new connections.
    public func flush(session id: String, owner: String?) throws -> Session {
        let session = try operable(session: id, owner: owner, operation: "flush")
        for store in sessionScopedStores { store.flush() }
        try store.commit()
        return session
    }

    /// The session, once its future requests were moved to a new, empty connection pool (the
    /// engine applies commands in order, so every task started after this call gets it).
    /// An invalidated session is 409.
    private func operable(session id: String, owner: String?, operation: String) throws -> Session {
        try state.withLock { s in
            guard s.accepting else { throw ServiceError.shuttingDown }
            let session = try visibleSession(s, id, owner)
            guard session.state != .invalidated else {
                throw ServiceError.conflict(code: "session_invalidated", message: "session \(id) is invalidated; \(operation) applies to a live session")
            }
            engine.submit(.renewConnections(pool: Session.connectionPool(session: id, owner: owner)))
            return session
        }
    }
}
