internal import TransferModel

/// reset, flush and invalidation reach the cookies as URLSession's do.
extension CookieStorage: SessionScopedStore {
    /// Empties what the session sees: its own jar when ephemeral, else the shared jar of its
    /// owner (as resetting a default session empties HTTPCookieStorage.shared), rows included.
    /// The `shared` session has no owner: resetting it empties the requesting token's jar.
    func reset(session: Session, requester: String?) {
        removeAll(in: Self.jar(for: session, requester: requester))
    }

    /// An ephemeral session's jar goes with it; the shared jar outlives every session.
    func discard(session: Session) {
        guard session.kind == .ephemeral else { return }
        removeAll(in: Self.jar(for: session))
    }
}
