internal import FoundationEssentials
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// URLCredentialStorage for every session of the daemon. Default and background sessions share
/// one store per owner (API token) of permanent credentials, kept in the database with sealed
/// passwords (`CredentialVault`) and in memory for use; every session keeps its own `forSession`
/// and `none` credentials in memory; an ephemeral session keeps all of its credentials in
/// memory, private to it. Partitioned per tenant by `CredentialScope`: every operation and
/// lookup names the scope of one token, and sees only that token's part (rows keyed by owner
/// too). Owned by `TransferService`; read on the engine thread when a 401
/// arrives, so lookups take only a short lock and never wait for the disk.
final class CredentialStore: Sendable {
    private struct Table: Sendable {
        /// Permanent credentials by owner key ("" without tokens).
        var shared: [String: [Credential]] = [:]
        /// Each session's own credentials (all of an ephemeral session's), per client of an
        /// owner-less session.
        var sessions: [CredentialScope.SessionKey: [Credential]] = [:]

        package func visible(in scope: CredentialScope) -> [Credential] {
            (scope.isPrivate ? [] : shared[scope.ownerKey] ?? []) + (sessions[scope.sessionKey] ?? [])
        }
    }

    private let table = Mutex(Table())
    /// Serialises changes, so the database and memory change together and in the same order.
    /// Held across the database write; lookups take only `table`, so they never wait for it.
    private let writing = Mutex(())
    private let store: any TaskStore
    let vault: CredentialVault
    let logger: Logger

    /// Loads the permanent credentials. Rows the key cannot open (the key file was lost or
    /// replaced) can never be used again: they are deleted, and the count is logged.
    init(store: any TaskStore, dataDirectory: String, logger: Logger) throws {
        self.store = store
        self.logger = logger
        vault = try CredentialVault(dataDirectory: dataDirectory)
        var shared: [String: [Credential]] = [:]
        var unreadable: [String: [Credential.ID]] = [:]
        for row in try store.loadCredentialRows() {
            let id = Credential.ID(space: row.space, user: row.user)
            guard let password = vault.open(row.sealedPassword, boundTo: Self.context(owner: row.ownerKey, id)) else {
                unreadable[row.ownerKey, default: []].append(id)
                continue
            }
            shared[row.ownerKey, default: []].append(Credential(space: row.space, user: row.user, password: password, persistence: .permanent))
        }
        for (owner, ids) in unreadable { try store.deleteCredentials(owner: owner, ids) }
        if !unreadable.isEmpty {
            logger.warning("stored credentials that credentials.key cannot open were removed", metadata: [
                "credentials.removed": "\(unreadable.values.map(\.count).reduce(0, +))",
            ])
        }
        table.withLock { $0.shared = shared }
    }

    // MARK: the API's operations

    /// Every credential the session sees, in a stable order.
    func list(_ scope: CredentialScope) -> [Credential] {
        table.withLock { $0.visible(in: scope) }.sorted { a, b in
            (a.space.host, a.space.port, a.space.protocol.rawValue, a.space.realm ?? "", a.space.authenticationMethod.rawValue, a.user)
                < (b.space.host, b.space.port, b.space.protocol.rawValue, b.space.realm ?? "", b.space.authenticationMethod.rawValue, b.user)
        }
    }

    /// Stores `credential`, replacing one of the same space and user wherever the session sees it.
    func put(_ credential: Credential, _ scope: CredentialScope) throws {
        try writing.withLock { _ in
            let id = credential.id
            let replacesShared = !scope.isPrivate && table.withLock { $0.shared[scope.ownerKey]?.contains { $0.id == id } ?? false }
            do {
                if scope.keepsShared(credential.persistence) {
                    let sealed = try vault.seal(credential.password, boundTo: Self.context(owner: scope.ownerKey, id))
                    try store.replaceCredential(Store.CredentialRow(ownerKey: scope.ownerKey, space: credential.space, user: credential.user, sealedPassword: sealed))
                } else if replacesShared {
                    try store.deleteCredentials(owner: scope.ownerKey, [id])
                }
            } catch {
                throw ServiceError.storage("the credential could not be saved: the database refused the write")
            }
            table.withLock { t in
                if !scope.isPrivate { t.shared[scope.ownerKey]?.removeAll { $0.id == id } }
                t.sessions[scope.sessionKey]?.removeAll { $0.id == id }
                if scope.keepsShared(credential.persistence) {
                    t.shared[scope.ownerKey, default: []].append(credential)
                } else {
                    t.sessions[scope.sessionKey, default: []].append(credential)
                }
            }
        }
    }

    /// Removes every credential the session sees that matches `filter`; returns how many.
    func delete(_ filter: CredentialFilter, _ scope: CredentialScope) throws -> Int {
        try writing.withLock { _ in
            let (shared, own) = table.withLock { t in
                (scope.isPrivate ? [] : (t.shared[scope.ownerKey] ?? []).filter(filter.matches).map(\.id),
                 (t.sessions[scope.sessionKey] ?? []).filter(filter.matches).map(\.id))
            }
            do {
                try store.deleteCredentials(owner: scope.ownerKey, shared)
            } catch {
                throw ServiceError.storage("the credentials could not be deleted: the database refused the write")
            }
            table.withLock { t in
                if !shared.isEmpty { t.shared[scope.ownerKey]?.removeAll { shared.contains($0.id) } }
                t.sessions[scope.sessionKey]?.removeAll { own.contains($0.id) }
            }
            return shared.count + own.count
        }
    }

    // MARK: the engine's lookups (engine thread)

    /// The credentials that may answer a challenge for `space`: same origin, a method that
    /// answers the challenged one, and the challenged realm or none. Those stored for exactly
    /// that realm come first, then the most session-specific (none, forSession, permanent).
    func candidates(for space: ProtectionSpace, in scope: CredentialScope) -> [Credential] {
        table.withLock { $0.visible(in: scope) }.filter { credential in
            let stored = credential.space
            return stored.host == space.host && stored.port == space.port && stored.protocol == space.protocol
                && stored.authenticationMethod.answers(space.authenticationMethod)
                && (stored.realm == nil || stored.realm == space.realm)
        }.sorted { a, b in
            (a.space.realm == nil ? 1 : 0, a.persistence.rank, a.user) < (b.space.realm == nil ? 1 : 0, b.persistence.rank, b.user)
        }
    }

    /// A credential of persistence `none` answers one challenge: it is forgotten once sent.
    func used(_ credential: Credential, in scope: CredentialScope) {
        guard credential.persistence == .none else { return }
        table.withLock { t in t.sessions[scope.sessionKey]?.removeAll { $0.id == credential.id && $0.persistence == .none } }
    }

    // MARK: session operations

    /// Empties what the session sees: its own credentials, and for a default or background
    /// session the shared store of its owner, rows included.
    func removeAll(_ scope: CredentialScope) throws {
        try writing.withLock { _ in
            if !scope.isPrivate {
                let ids = table.withLock { ($0.shared[scope.ownerKey] ?? []).map(\.id) }
                try store.deleteCredentials(owner: scope.ownerKey, ids)
            }
            table.withLock { t in
                if !scope.isPrivate { t.shared[scope.ownerKey] = nil }
                t.sessions[scope.sessionKey] = nil
            }
        }
    }

    /// Drops a session's own credentials, every client's (it was invalidated).
    func forget(session id: String) {
        table.withLock { t in t.sessions = t.sessions.filter { $0.key.sessionId != id } }
    }

    /// The authenticated data of a sealed password: its row's identity, so it opens only there.
    private static func context(owner: String, _ id: Credential.ID) -> Data {
        let space = id.space
        let parts = [owner, space.host, String(space.port), space.protocol.rawValue, space.realm.map { "r" + $0 } ?? "-",
                     space.authenticationMethod.rawValue, id.user]
        return Data(parts.joined(separator: "\u{0}").utf8)
    }
}
