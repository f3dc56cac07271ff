internal import LibCrypto
internal import FoundationEssentials
public import HTTPServer

/// Bearer-token checks. Tokens are kept only as SHA-256 digests of their secrets; a token's
/// fingerprint (the first 16 hex digits of its digest) is the owner recorded on what it creates,
/// so the store never holds a token. A presented token's digest is compared with every
/// configured one in constant time, without stopping at a match.
public struct Authenticator: Sendable {
    private struct Known: Sendable {
        let digest: [UInt8]
        let identity: Identity
    }

    private let known: [Known]

    public init(tokens: [AccessToken]) {
        known = tokens.filter { !$0.secret.isEmpty }.map { token in
            let digest = Self.digest(token.secret)
            return Known(digest: digest, identity: Identity(owner: Self.fingerprint(digest: digest), role: token.role, name: token.name))
        }
    }

    public var isEnabled: Bool { !known.isEmpty }

    /// The configured token whose fingerprint is `owner` (a file grant's tenant): nil once that
    /// token is gone from the configuration, so its grants die with it.
    func identity(owner: String) -> Identity? {
        known.first { $0.identity.owner == owner }?.identity
    }

    private static func digest(_ secret: String) -> [UInt8] { HashFunction.sha256.hash(Data(secret.utf8)) }

    /// The owner key of a secret: unchanged since tokens had no names or roles, so what a token
    /// created before stays its own.
    static func fingerprint(_ secret: String) -> String { fingerprint(digest: digest(secret)) }

    private static func fingerprint(digest: [UInt8]) -> String {
        digest.prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    public enum Outcome: Sendable, Equatable {
        /// Tokens are off: everyone is `Identity.anonymous`.
        case anonymous
        case authenticated(Identity)
        case rejected

        /// Who the request is from; nil when it was rejected.
        public var identity: Identity? {
            switch self {
            case .anonymous: return .anonymous
            case .authenticated(let identity): return identity
            case .rejected: return nil
            }
        }
    }

    /// Checks `Authorization: Bearer TOKEN`.
    public func check(_ headers: HTTPHeaders) -> Outcome {
        guard isEnabled else { return .anonymous }
        guard let value = headers["Authorization"], value.lowercased().hasPrefix("bearer ") else { return .rejected }
        let presented = Self.digest(String(value.dropFirst("bearer ".count)).trimmingCharacters(in: [" "]))
        var match: Identity?
        // Every configured digest is compared, whichever matches.
        for token in known where ConstantTime.equal(token.digest, presented) { match = token.identity }
        return match.map(Outcome.authenticated) ?? .rejected
    }
}
