/// Who sent a request, as the routes see it (`APIRequest.identity`): the owner recorded on what
/// it creates, its role, and the token's name for logs. One value, so a route can never check
/// the owner of one token against the role of another.
public struct Identity: Sendable, Equatable {
    /// The token's fingerprint (`Authenticator.fingerprint`): the tenant key of the store, the
    /// URL cache's partitions and sealed resume data. Nil without tokens.
    public let owner: String?
    public let role: TokenRole
    /// The token's configured name (never its secret); nil without tokens.
    public let name: String?

    public init(owner: String?, role: TokenRole, name: String?) {
        self.owner = owner
        self.role = role
        self.name = name
    }

    /// Tokens are off: one user who may do everything, owning what it creates as nil.
    public static let anonymous = Identity(owner: nil, role: .admin, name: nil)

    public var isAdmin: Bool { role == .admin }
}
