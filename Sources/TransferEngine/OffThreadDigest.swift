internal import Dispatch
internal import FoundationEssentials
internal import Synchronization

/// A big download's hashing, done on a queue of its own instead of the engine thread.
///
/// Every download's bytes go through SHA-256 (the task's `digest`) and the algorithm of its
/// checksum, if any. On the engine thread that was 40% of the daemon's CPU in a loopback 1 GiB
/// download, which then ran at 0.74x curl; here a second core hashes while the engine thread
/// receives and writes. Small files are hashed inline (`DownloadDigest.inlineBytes`): a copy and
/// a hand-off would cost them more than the hash.
///
/// Unchecked Sendable: `accumulator` is touched only on `queue`; the owner hands each chunk over
/// as a copy (curl's buffer is valid only during its callback) and reads the result with `finish`.
/// At most `maxBacklog` bytes wait for the queue, so a hasher slower than the network holds the
/// engine back instead of filling memory.
final class OffThreadDigest: @unchecked Sendable {
    /// One queue for every download: a core's worth of hashing beside the engine thread.
    private static let queue = DispatchQueue(label: "transferd.engine.digest")
    static let maxBacklog = 2 * 1024 * 1024
    private var accumulator: DigestAccumulator
    private let backlog = Atomic<Int>(0)

    init(continuing accumulator: DigestAccumulator) { self.accumulator = accumulator }

    /// Hashes a copy of `buffer` on the queue; waits for the queue when too much is waiting.
    func update(_ buffer: UnsafeRawBufferPointer) {
        let bytes = Data(buffer)
        let waiting = backlog.add(bytes.count, ordering: .relaxed).newValue
        Self.queue.async { [self] in
            bytes.withUnsafeBytes { accumulator.update($0) }
            backlog.subtract(bytes.count, ordering: .relaxed)
        }
        if waiting > Self.maxBacklog { Self.queue.sync {} }
    }

    /// The hashes of everything handed over, once the queue has taken it all.
    func finish() -> DigestAccumulator { Self.queue.sync { accumulator } }
}
