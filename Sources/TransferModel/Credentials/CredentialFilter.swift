/// Which credentials `DELETE /v1/sessions/{sid}/credentials` removes: every field given must
/// match (a realm filter matches that realm exactly); no field at all removes every credential
/// the session sees.
public struct CredentialFilter: Sendable, Equatable {
    public var host: String?
    public var port: Int?
    public var `protocol`: ProtectionSpaceProtocol?
    public var realm: String?
    public var authenticationMethod: AuthenticationMethod?
    public var user: String?

    public init(host: String? = nil, port: Int? = nil, protocol: ProtectionSpaceProtocol? = nil, realm: String? = nil,
                authenticationMethod: AuthenticationMethod? = nil, user: String? = nil) {
        self.host = host.map(ProtectionSpace.normalised(host:))
        self.port = port
        self.protocol = `protocol`
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.user = user
    }

    package func matches(_ credential: Credential) -> Bool {
        let space = credential.space
        return (host == nil || host == space.host) && (port == nil || port == space.port)
            && (`protocol` == nil || `protocol` == space.protocol) && (realm == nil || realm == space.realm)
            && (authenticationMethod == nil || authenticationMethod == space.authenticationMethod)
            && (user == nil || user == credential.user)
    }
}
