internal import CLibCrypto
public import FoundationEssentials

/// The hash functions transferd computes: SHA-256 for every file and blob, the others where a
/// task's checksum or a server's digest header names them.
public enum HashFunction: Sendable, CaseIterable {
    case md5, sha1, sha256, sha384, sha512

    /// OpenSSL's implementation, fetched from its provider once per process and kept (never
    /// freed). Handing `EVP_sha256()` to every `EVP_DigestInit_ex` made OpenSSL 3 look the
    /// provider's implementation up again each time (an implicit fetch, under its lock): about
    /// 3,000 instructions per hash, and every download starts one or two (callgrind). An
    /// `EVP_MD` fetched this way may be used from any thread. If the fetch fails (a provider
    /// without the algorithm), the legacy object is used, which fails as it did before.
    var evp: OpaquePointer {
        switch self {
        case .md5: Fetched.md5 ?? EVP_md5()
        case .sha1: Fetched.sha1 ?? EVP_sha1()
        case .sha256: Fetched.sha256 ?? EVP_sha256()
        case .sha384: Fetched.sha384 ?? EVP_sha384()
        case .sha512: Fetched.sha512 ?? EVP_sha512()
        }
    }

    /// Read-only after their one-time initialisation (Swift's lazy globals are thread-safe).
    private enum Fetched {
        nonisolated(unsafe) static let md5 = EVP_MD_fetch(nil, "MD5", nil)
        nonisolated(unsafe) static let sha1 = EVP_MD_fetch(nil, "SHA1", nil)
        nonisolated(unsafe) static let sha256 = EVP_MD_fetch(nil, "SHA256", nil)
        nonisolated(unsafe) static let sha384 = EVP_MD_fetch(nil, "SHA384", nil)
        nonisolated(unsafe) static let sha512 = EVP_MD_fetch(nil, "SHA512", nil)
    }

    /// The digest of `bytes` in one call.
    public func hash(_ bytes: some ContiguousBytes) -> [UInt8] {
        var hash = StreamingHash(self)
        hash.update(bytes)
        return hash.finalize()
    }
}
