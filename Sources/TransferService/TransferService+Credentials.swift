internal import Synchronization
internal import JSONModel
public import TransferModel
internal import TransferEngine

/// The credential store's API: a session sees the shared store of its owner (default and
/// background sessions) and its own credentials. Passwords go in, never out.
extension TransferService {
    /// Every credential the session sees, without passwords.
    public func credentials(in sessionId: String, owner: String?) throws -> [CredentialInfo] {
        let session = try state.withLock { s in try visibleSession(s, sessionId, owner) }
        return credentials.list(CredentialScope(session, requester: owner)).map(\.info)
    }

    /// Stores one credential, replacing the session's credential of the same space and user.
    public func putCredential(_ put: CredentialPut, in sessionId: String, owner: String?) throws -> CredentialInfo {
        let session = try state.withLock { s throws -> Session in
            guard s.accepting else { throw ServiceError.shuttingDown }
            let session = try visibleSession(s, sessionId, owner)
            guard session.state != .invalidated else {
                throw ServiceError.conflict(code: "session_invalidated", message: "session \(sessionId) is invalidated; its credentials can no longer be used")
            }
            return session
        }
        try credentials.put(put.credential, CredentialScope(session, requester: owner))
        return put.credential.info
    }

    /// Removes the credentials the session sees that match `filter`; returns how many.
    public func deleteCredentials(matching filter: CredentialFilter, in sessionId: String, owner: String?) throws -> Int {
        let session = try state.withLock { s in try visibleSession(s, sessionId, owner) }
        return try credentials.delete(filter, CredentialScope(session, requester: owner))
    }
}

extension ChallengeReport {
    /// didReceiveChallenge's fields. The proposed credential carries its user and persistence:
    /// a password never reaches the feed.
    var eventFields: [String: JSONValue] {
        [
            "protectionSpace": JSONValue(encoding: space),
            "previousFailureCount": .integer(Int64(previousFailureCount)),
            "proposedCredential": proposed.map { .object(["user": .string($0.user), "persistence": .string($0.persistence.rawValue)]) } ?? .null,
        ]
    }
}
