/// Which credentials a session sees: a default or background session sees the shared store of
/// its owner (URLCredentialStorage.shared, one per API token) and its own session credentials;
/// an ephemeral session sees only its own, all in memory.
struct CredentialScope: Sendable, Hashable {
    let sessionId: String
    /// The owner's key in the shared store: the token fingerprint, "" without tokens.
    let ownerKey: String
    /// Ephemeral: nothing shared, nothing on disk.
    let isPrivate: Bool

    init(_ session: Session) {
        sessionId = session.id
        ownerKey = session.owner ?? ""
        isPrivate = session.kind == .ephemeral
    }

    /// Where a credential of `persistence` lives for this session.
    func keepsShared(_ persistence: CredentialPersistence) -> Bool { !isPrivate && persistence == .permanent }
}

/// The credentials a running transfer may answer challenges with: the store and the task's
/// session. Handed to the engine in the `TransferJob`; read on the engine thread.
struct SessionCredentials: Sendable {
    let store: CredentialStore
    let scope: CredentialScope

    /// The stored credentials that may answer a challenge for `space`, best first.
    func candidates(for space: ProtectionSpace) -> [Credential] { store.candidates(for: space, in: scope) }

    /// A credential was sent: one of persistence `none` is forgotten now.
    func used(_ credential: Credential) { store.used(credential, in: scope) }
}
