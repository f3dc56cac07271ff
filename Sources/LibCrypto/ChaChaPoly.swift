internal import CLibCrypto
public import FoundationEssentials

/// ChaCha20-Poly1305 (RFC 8439) with a 32-byte key: sealed credentials and resume data. A
/// sealed box is nonce (12 random bytes) || ciphertext || tag (16 bytes), the layout swift-crypto's
/// `ChaChaPoly.SealedBox.combined` has, so what an earlier transferd sealed still opens.
public enum ChaChaPoly {
    public static let keyByteCount = 32
    static let nonceByteCount = 12
    static let tagByteCount = 16

    public struct Failure: Error, Sendable {}

    /// `plaintext` sealed under `key`, bound to `authenticating` (not secret, but required to open).
    public static func seal(_ plaintext: some ContiguousBytes, key: some ContiguousBytes, authenticating: some ContiguousBytes) throws(Failure) -> Data {
        guard let nonce = try? SecureRandom.bytes(nonceByteCount) else { throw Failure() }
        let cipher = try Cipher(encrypting: true, key: key, nonce: nonce)
        try cipher.authenticate(authenticating)
        var box = Data(nonce)
        guard let encrypted = plaintext.withUnsafeBytes({ cipher.update($0) }) else { throw Failure() }
        box.append(contentsOf: encrypted)
        try cipher.finish()
        box.append(contentsOf: try cipher.tag())
        return box
    }

    /// The plaintext of `box`, or `Failure` when it was not sealed under `key` with `authenticating`
    /// or was altered.
    public static func open(_ box: Data, key: some ContiguousBytes, authenticating: some ContiguousBytes) throws(Failure) -> Data {
        guard box.count >= nonceByteCount + tagByteCount else { throw Failure() }
        let bytes = [UInt8](box)
        let sealed = bytes[nonceByteCount..<(bytes.count - tagByteCount)]
        let cipher = try Cipher(encrypting: false, key: key, nonce: Array(bytes[..<nonceByteCount]))
        try cipher.authenticate(authenticating)
        guard let plain = sealed.withUnsafeBytes({ cipher.update($0) }) else { throw Failure() }
        try cipher.expect(tag: Array(bytes.suffix(tagByteCount)))
        try cipher.finish()
        return Data(plain)
    }

    /// One EVP_CIPHER_CTX for one seal or open.
    private final class Cipher {
        let pointer: OpaquePointer

        init(encrypting: Bool, key: some ContiguousBytes, nonce: [UInt8]) throws(Failure) {
            guard let pointer = EVP_CIPHER_CTX_new() else { throw Failure() }
            self.pointer = pointer
            let ready = key.withUnsafeBytes { key in
                key.count == ChaChaPoly.keyByteCount
                    && EVP_CipherInit_ex(pointer, EVP_chacha20_poly1305(), nil, nil, nil, encrypting ? 1 : 0) == 1
                    && EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1
                    && EVP_CipherInit_ex(pointer, nil, nil, key.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce, -1) == 1
            }
            guard ready else { throw Failure() }
        }

        deinit { EVP_CIPHER_CTX_free(pointer) }

        func authenticate(_ data: some ContiguousBytes) throws(Failure) {
            let ok = data.withUnsafeBytes { data in
                guard data.count > 0, let base = data.baseAddress else { return true }
                var length: Int32 = 0
                return EVP_CipherUpdate(pointer, nil, &length, base.assumingMemoryBound(to: UInt8.self), Int32(data.count)) == 1
            }
            guard ok else { throw Failure() }
        }

        /// The input encrypted or decrypted (as long as it), nil when OpenSSL refuses it.
        func update(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
            guard input.count > 0, let base = input.baseAddress else { return [] }
            guard input.count < Int(Int32.max) else { return nil }
            var output = [UInt8](repeating: 0, count: input.count)
            var length: Int32 = 0
            guard EVP_CipherUpdate(pointer, &output, &length, base.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1 else { return nil }
            return Array(output.prefix(Int(length)))
        }

        func expect(tag: [UInt8]) throws(Failure) {
            var tag = tag
            guard EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), &tag) == 1 else { throw Failure() }
        }

        /// Ends the stream; when opening, this is where a wrong tag fails.
        func finish() throws(Failure) {
            var rest = [UInt8](repeating: 0, count: 16)
            var length: Int32 = 0
            guard EVP_CipherFinal_ex(pointer, &rest, &length) == 1, length == 0 else { throw Failure() }
        }

        func tag() throws(Failure) -> [UInt8] {
            var tag = [UInt8](repeating: 0, count: ChaChaPoly.tagByteCount)
            guard EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_AEAD_GET_TAG, Int32(tag.count), &tag) == 1 else { throw Failure() }
            return tag
        }
    }
}
