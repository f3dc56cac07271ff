internal import Crypto
internal import FoundationEssentials
public import HTTPServer

/// Bearer-token checks. Tokens are kept only as SHA-256 digests; a token's fingerprint (the
/// first 16 hex digits of its digest) is the owner recorded on what it creates, so the store
/// never holds a token.
public struct Authenticator: Sendable {
    private let fingerprints: Set<String>

    public init(tokens: [String]) {
        fingerprints = Set(tokens.filter { !$0.isEmpty }.map(Self.fingerprint))
    }

    public var isEnabled: Bool { !fingerprints.isEmpty }

    static func fingerprint(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    public enum Outcome: Sendable, Equatable {
        /// Tokens are off: everyone is the anonymous owner (nil).
        case anonymous
        case owner(String)
        case rejected
    }

    /// Checks `Authorization: Bearer TOKEN`.
    public func check(_ headers: HTTPHeaders) -> Outcome {
        guard isEnabled else { return .anonymous }
        guard let value = headers["Authorization"], value.lowercased().hasPrefix("bearer ") else { return .rejected }
        let token = String(value.dropFirst("bearer ".count)).trimmingCharacters(in: [" "])
        let fingerprint = Self.fingerprint(token)
        return fingerprints.contains(fingerprint) ? .owner(fingerprint) : .rejected
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
