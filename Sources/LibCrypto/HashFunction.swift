internal import CLibCrypto
public import FoundationEssentials

/// The hash functions transferd computes: SHA-256 for every file and blob, the others where a
/// task's checksum or a server's digest header names them.
public enum HashFunction: Sendable, CaseIterable {
    case md5, sha1, sha256, sha384, sha512

    /// OpenSSL's implementation (a static object: never freed).
    var evp: OpaquePointer {
        switch self {
        case .md5: EVP_md5()
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        }
    }

    /// The digest of `bytes` in one call.
    public func hash(_ bytes: some ContiguousBytes) -> [UInt8] {
        var hash = StreamingHash(self)
        hash.update(bytes)
        return hash.finalize()
    }
}
