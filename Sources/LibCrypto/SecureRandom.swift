internal import CLibCrypto

/// Bytes from OpenSSL's CSPRNG: keys and nonces.
public enum SecureRandom {
    public struct Failure: Error, Sendable {}

    public static func bytes(_ count: Int) throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&bytes, Int32(count)) == 1 else { throw Failure() }
        return bytes
    }
}
