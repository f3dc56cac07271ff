internal import LibCrypto
package import FoundationEssentials
package import TransferModel

/// Hashes one stream of bytes with several algorithms in one pass (OpenSSL's hashes, through
/// LibCrypto). A value owned by whoever feeds it: a `DownloadDigest`, or a data task's body.
struct DigestAccumulator {
    private var hashes: [(DigestAlgorithm, StreamingHash)]

    /// SHA-256 (every task reports it) and `extra`.
    init(_ extra: some Sequence<DigestAlgorithm> = []) {
        let algorithms = Set(extra).union([.sha256]).sorted()
        hashes = algorithms.map { ($0, StreamingHash($0.hashFunction)) }
    }

    var algorithms: Set<DigestAlgorithm> { Set(hashes.map(\.0)) }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        for index in hashes.indices { hashes[index].1.update(buffer) }
    }

    /// The digests so far (the accumulator may go on).
    func digest() -> TaskDigest {
        TaskDigest(values: Dictionary(uniqueKeysWithValues: hashes.map { ($0.0.rawValue, hexString($0.1.finalize())) }))
    }
}

extension DigestAlgorithm {
    var hashFunction: HashFunction {
        switch self {
        case .md5: .md5
        case .sha1: .sha1
        case .sha256: .sha256
        case .sha384: .sha384
        case .sha512: .sha512
        }
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
