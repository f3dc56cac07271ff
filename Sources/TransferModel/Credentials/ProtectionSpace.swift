internal import FoundationEssentials

/// URLProtectionSpace for a server (proxy spaces are configured with the session's
/// connectionProxyDictionary instead): the origin, the realm the server names in its challenge,
/// and the authentication scheme. A stored credential's realm may be nil, meaning "any realm of
/// this origin"; a challenge's space carries the realm the server sent.
public struct ProtectionSpace: Codable, Sendable, Hashable {
    /// Lower-cased; an IPv6 address without brackets.
    public var host: String
    public var port: Int
    public var `protocol`: ProtectionSpaceProtocol
    @NullEncoded public var realm: String?
    public var authenticationMethod: AuthenticationMethod

    public init(host: String, port: Int, protocol: ProtectionSpaceProtocol, realm: String?, authenticationMethod: AuthenticationMethod) {
        self.host = Self.normalised(host: host)
        self.port = port
        self.protocol = `protocol`
        self.realm = realm
        self.authenticationMethod = authenticationMethod
    }

    public static func == (a: ProtectionSpace, b: ProtectionSpace) -> Bool {
        a.host == b.host && a.port == b.port && a.protocol == b.protocol && a.realm == b.realm
            && a.authenticationMethod == b.authenticationMethod
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(`protocol`)
        hasher.combine(realm)
        hasher.combine(authenticationMethod)
    }

    /// Host names compare case-insensitively; a URL writes an IPv6 address in brackets.
    static func normalised(host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }
}

/// The protection space's protocol: the scheme of the URLs it covers. A credential for ftp,
/// ftps or sftp is stored with authenticationMethod "default" (those schemes have no challenge
/// that names a method) and is sent when the task starts, as those protocols log in first.
public enum ProtectionSpaceProtocol: String, Codable, Sendable, CaseIterable {
    case http, https, ftp, ftps, sftp

    public var defaultPort: Int {
        switch self {
        case .http: 80
        case .https: 443
        case .ftp: 21
        case .ftps: 990
        case .sftp: 22
        }
    }
}

/// URLProtectionSpace.authenticationMethod for the HTTP schemes transferd answers. libcurl also
/// offers NTLM, Negotiate (SPNEGO) and AWS SigV4, but no peer here can prove them, so they are
/// left out rather than claimed.
public enum AuthenticationMethod: String, Codable, Sendable, CaseIterable {
    /// NSURLAuthenticationMethodDefault: whichever supported scheme the server asks for.
    case `default`
    /// RFC 7617 Basic.
    case httpBasic = "HTTPBasic"
    /// RFC 7616 Digest.
    case httpDigest = "HTTPDigest"
    /// NSURLAuthenticationMethodServerTrust: the server's TLS certificate, which a client that
    /// decides challenges may accept by its key (`DecisionAnswer.trustServer`). Never stored.
    case serverTrust = "ServerTrust"

    /// The method of a challenge's scheme name (compared case-insensitively), nil if unsupported.
    package init?(scheme: String) {
        switch scheme.lowercased() {
        case "basic": self = .httpBasic
        case "digest": self = .httpDigest
        default: return nil
        }
    }

    /// Whether a credential stored for this method may answer a challenge of `challenged`.
    package func answers(_ challenged: AuthenticationMethod) -> Bool { self == .default || self == challenged }
}

/// The origin a challenge came from, read from the URL that was answered with a 401.
package struct ChallengeOrigin: Codable, Sendable, Equatable {
    let host: String
    let port: Int
    let `protocol`: ProtectionSpaceProtocol

    package init?(url: String) {
        // Only HTTP answers challenges; ftp, ftps and sftp send their login up front.
        guard let parsed = URL(string: url), let scheme = parsed.scheme.flatMap({ ProtectionSpaceProtocol(rawValue: $0.lowercased()) }),
              scheme == .http || scheme == .https, let host = parsed.host, !host.isEmpty else { return nil }
        self.host = ProtectionSpace.normalised(host: host)
        self.protocol = scheme
        port = parsed.port ?? scheme.defaultPort
    }

    package func space(realm: String?, method: AuthenticationMethod) -> ProtectionSpace {
        ProtectionSpace(host: host, port: port, protocol: `protocol`, realm: realm, authenticationMethod: method)
    }
}
