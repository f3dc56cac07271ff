/// Which credentials a session sees, as one client (token) uses it: a default or background
/// session sees the shared store of its owner (URLCredentialStorage.shared, one per API token)
/// and its own session credentials; an ephemeral session sees only its own, all in memory.
///
/// Partitioned per tenant: a session without an owner (the `shared` session, or any session
/// of a daemon without tokens) is used by every client, each with its own part: its shared
/// store and its session credentials are the requesting token's, as `CookieStorage.jar` does
/// for cookies. So one token's credential never answers, lists or deletes for another's.
package struct CredentialScope: Sendable, Hashable {
    /// Where the session's own (forSession, none, ephemeral) credentials are kept.
    package let sessionKey: SessionKey
    /// The owner's key in the shared store: the token fingerprint, "" without tokens.
    package let ownerKey: String
    /// Ephemeral: nothing shared, nothing on disk.
    package let isPrivate: Bool

    /// A session's own credentials as one client sees them: the session, and the requesting
    /// client when the session has no owner of its own ("" when it has one, or without tokens).
    package struct SessionKey: Sendable, Hashable {
        package let sessionId: String
        let client: String
    }

    /// `requester` is the token fingerprint of the client (the task's owner for a transfer).
    package init(_ session: Session, requester: String?) {
        let client = session.owner == nil ? requester ?? "" : ""
        sessionKey = SessionKey(sessionId: session.id, client: client)
        ownerKey = session.owner ?? client
        isPrivate = session.kind == .ephemeral
    }

    /// Where a credential of `persistence` lives for this session.
    package func keepsShared(_ persistence: CredentialPersistence) -> Bool { !isPrivate && persistence == .permanent }
}
