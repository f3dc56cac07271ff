internal import Crypto
package import FoundationEssentials
package import TransferModel

/// Hashes one stream of bytes with several algorithms in one pass (swift-crypto's BoringSSL
/// hashes). A value owned by whoever feeds it: a `DownloadDigest`, or a data task's body.
struct DigestAccumulator {
    /// One algorithm's running hash (swift-crypto's types share no protocol with `update` that
    /// could hold them in one array without boxing).
    private enum Hash {
        case md5(Insecure.MD5)
        case sha1(Insecure.SHA1)
        case sha256(SHA256)
        case sha384(SHA384)
        case sha512(SHA512)

        init(_ algorithm: DigestAlgorithm) {
            switch algorithm {
            case .md5: self = .md5(Insecure.MD5())
            case .sha1: self = .sha1(Insecure.SHA1())
            case .sha256: self = .sha256(SHA256())
            case .sha384: self = .sha384(SHA384())
            case .sha512: self = .sha512(SHA512())
            }
        }

        mutating func update(_ buffer: UnsafeRawBufferPointer) {
            switch self {
            case .md5(var hash): hash.update(bufferPointer: buffer); self = .md5(hash)
            case .sha1(var hash): hash.update(bufferPointer: buffer); self = .sha1(hash)
            case .sha256(var hash): hash.update(bufferPointer: buffer); self = .sha256(hash)
            case .sha384(var hash): hash.update(bufferPointer: buffer); self = .sha384(hash)
            case .sha512(var hash): hash.update(bufferPointer: buffer); self = .sha512(hash)
            }
        }

        func hex() -> String {
            switch self {
            case .md5(let hash): hexString(hash.finalize())
            case .sha1(let hash): hexString(hash.finalize())
            case .sha256(let hash): hexString(hash.finalize())
            case .sha384(let hash): hexString(hash.finalize())
            case .sha512(let hash): hexString(hash.finalize())
            }
        }
    }

    private var hashes: [(DigestAlgorithm, Hash)]

    /// SHA-256 (every task reports it) and `extra`.
    init(_ extra: some Sequence<DigestAlgorithm> = []) {
        let algorithms = Set(extra).union([.sha256]).sorted()
        hashes = algorithms.map { ($0, Hash($0)) }
    }

    var algorithms: Set<DigestAlgorithm> { Set(hashes.map(\.0)) }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        for index in hashes.indices { hashes[index].1.update(buffer) }
    }

    /// The digests so far (the accumulator may go on).
    func digest() -> TaskDigest {
        TaskDigest(values: Dictionary(uniqueKeysWithValues: hashes.map { ($0.0.rawValue, $0.1.hex()) }))
    }
}

extension TransferOutcome {
    /// A data task's successful outcome with its body's digest, or a failure when the body does
    /// not have the digest the task's `checksum` or the server's digest header says it must.
    /// One pass over the body in memory (at most `maxBodySize`), on the thread that ends the task.
    package static func verifiedBody(_ body: Data, response: ResponseInfo, method: String, checksum: Checksum?) -> TransferOutcome {
        let announced = Checksum.announced(by: response, method: method)
        var accumulator = DigestAccumulator([checksum?.algorithm, announced?.checksum.algorithm].compactMap { $0 })
        body.withUnsafeBytes { accumulator.update($0) }
        let digest = accumulator.digest()
        if let checksum, let error = digest.mismatch(checksum, source: "the task's checksum") { return .failure(error) }
        if let announced, let error = digest.mismatch(announced.checksum, source: "the server's \(announced.header)") { return .failure(error) }
        return .success(body: body, response: response, location: nil, digest: digest)
    }
}
