internal import FoundationEssentials

/// URLCredential.Persistence, as this service reads it.
public enum CredentialPersistence: String, Codable, Sendable, CaseIterable {
    /// Answers the session's next matching challenge once, and is then forgotten; never stored.
    case none
    /// Kept in memory for this session until it is invalidated or the daemon stops.
    case forSession
    /// Kept in the shared store of default and background sessions, on disk with its password
    /// encrypted; an ephemeral session keeps it in memory, private to it.
    case permanent

    /// Which of several matching credentials is tried first: the most specific to this session.
    package var rank: Int {
        switch self {
        case .none: return 0
        case .forSession: return 1
        case .permanent: return 2
        }
    }
}

/// One URLCredential with the protection space it is stored for. The password lives only here,
/// in memory (and sealed in the database for permanent ones); it is never encoded.
package struct Credential: Sendable, Equatable {
    package var space: ProtectionSpace
    package var user: String
    package var password: String
    package var persistence: CredentialPersistence

    /// A credential replaces another with the same space and user.
    package var id: ID { ID(space: space, user: user) }

    package struct ID: Sendable, Hashable {
        package let space: ProtectionSpace
        package let user: String

        /// The memberwise initializer, for the layers above.
        package init(space: ProtectionSpace, user: String) {
            self.space = space
            self.user = user
        }
    }

    /// What the API shows: everything but the password.
    package var info: CredentialInfo { CredentialInfo(protectionSpace: space, user: user, persistence: persistence) }

    /// The memberwise initializer, for the layers above.
    package init(space: ProtectionSpace, user: String, password: String, persistence: CredentialPersistence) {
        self.space = space
        self.user = user
        self.password = password
        self.persistence = persistence
    }
}

/// A stored credential as `GET /v1/sessions/{sid}/credentials` lists it: never the password.
public struct CredentialInfo: Codable, Sendable, Equatable {
    public var protectionSpace: ProtectionSpace
    public var user: String
    public var persistence: CredentialPersistence
}
