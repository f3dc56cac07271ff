internal import CLibCrypto
public import FoundationEssentials

/// HMAC-SHA256 (RFC 2104): webhook signatures and file grants.
public enum HMACSHA256 {
    /// The 32-byte code of `message` under `key`.
    public static func code(for message: some ContiguousBytes, key: some ContiguousBytes) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: 32)
        var length = 0
        let status = key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                // A zero-length key or message still needs a valid address.
                withUnsafeBytes(of: 0 as UInt8) { empty in
                    EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil,
                              key.baseAddress ?? empty.baseAddress, key.count,
                              (message.baseAddress ?? empty.baseAddress)?.assumingMemoryBound(to: UInt8.self), message.count,
                              &code, code.count, &length)
                }
            }
        }
        guard status != nil, length == 32 else { fatalError("EVP_Q_mac(HMAC, SHA256) failed") }
        return code
    }

    /// Whether `code` is the code of `message` under `key`, compared in constant time.
    public static func isValid(_ code: some ContiguousBytes, for message: some ContiguousBytes, key: some ContiguousBytes) -> Bool {
        let expected = Self.code(for: message, key: key)
        return code.withUnsafeBytes { given in
            given.count == expected.count && CRYPTO_memcmp(given.baseAddress, expected, expected.count) == 0
        }
    }
}
