internal import CLibCrypto
public import FoundationEssentials

/// A hash fed piece by piece: a file as it streams to disk, a body as it arrives. A value: a
/// copy goes on from where the original was (copy on write of OpenSSL's context), and
/// `finalize()` leaves the hash usable, so a digest can be read in the middle of a stream.
public struct StreamingHash: Sendable {
    private var context: Context

    public init(_ function: HashFunction) {
        context = Context(function)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0, let base = bytes.baseAddress else { return }
        if !isKnownUniquelyReferenced(&context) { context = context.copy() }
        guard EVP_DigestUpdate(context.pointer, base, bytes.count) == 1 else { fatalError("EVP_DigestUpdate failed") }
    }

    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything fed so far.
    public func finalize() -> [UInt8] {
        let final = context.copy()
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(final.pointer, &digest, &length) == 1 else { fatalError("EVP_DigestFinal_ex failed") }
        return Array(digest.prefix(Int(length)))
    }

    /// Owns one EVP_MD_CTX. Shared between copies of a hash only until one of them changes it
    /// (`update` copies first), and then only read, so sharing it across threads is safe.
    private final class Context: @unchecked Sendable {
        let pointer: OpaquePointer

        init(_ function: HashFunction) {
            guard let pointer = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
            guard EVP_DigestInit_ex(pointer, function.evp, nil) == 1 else { fatalError("EVP_DigestInit_ex failed for \(function)") }
            self.pointer = pointer
        }

        private init(copying other: OpaquePointer) {
            guard let pointer = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
            guard EVP_MD_CTX_copy_ex(pointer, other) == 1 else { fatalError("EVP_MD_CTX_copy_ex failed") }
            self.pointer = pointer
        }

        func copy() -> Context { Context(copying: pointer) }

        deinit { EVP_MD_CTX_free(pointer) }
    }
}
