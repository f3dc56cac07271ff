internal import Dispatch
internal import Glibc

/// A big download's hashing, done on a queue of its own instead of the engine thread, from the
/// bytes in its file.
///
/// Every download's bytes go through SHA-256 (the task's `digest`) and the algorithm of its
/// checksum, if any. On the engine thread that was 40% of the daemon's CPU in a loopback 1 GiB
/// download, which then ran at 0.74x curl; here a second core hashes while the engine thread
/// receives and writes. Small files are hashed inline (`DownloadDigest.inlineBytes`): a hand-off
/// would cost them more than the hash.
///
/// The queue reads the bytes back from the file (a descriptor of its own), so the engine thread
/// neither copies nor allocates per chunk: it says how far the file is written, and every
/// `stepSize` bytes one read-and-hash step is queued. (A copy of each of libcurl's 16 KiB chunks
/// handed over on its own, 65,536 allocations, queue items and thread wake-ups per GiB, cost
/// about as much CPU as the hash.) The digest covers the bytes as they are in the file. At most
/// `stepsInFlight` steps wait, so a hasher slower than the network holds the engine back (for as
/// long as one step takes), and reads what was written recently, still in the page cache.
///
/// Unchecked Sendable: `accumulator`, `buffer` and `readFailed` are touched only on `queue`;
/// `handedOver` only by the owner, which reads the result with `finish`.
final class OffThreadDigest: @unchecked Sendable {
    /// One queue for every download: a core's worth of hashing beside the engine thread.
    private static let queue = DispatchQueue(label: "transferd.engine.digest")
    /// Bytes read and hashed per queued step: 32 of libcurl's write callbacks.
    static let stepSize = 512 * 1024
    /// Steps queued and not done yet, at most (16 MiB of the file not hashed yet, in the page
    /// cache): enough that a hasher descheduled for a few ms (2 cores shared with other work)
    /// does not stop the engine; with 4 (2 MiB) the engine thread waited for it about 370 times
    /// per GiB and the download ran at 0.64x curl against 0.79x with these, in the same runs.
    /// The download's end waits for at most this much hashing (about 10 ms).
    static let stepsInFlight = 32
    private var accumulator: DigestAccumulator
    private let descriptor: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: stepSize, alignment: 4096)
    /// A read of the file failed or came short: no digest can be given.
    private var readFailed = false
    /// Free step slots: taken by the owner before it queues a step, given back by the queue.
    private let slots = DispatchSemaphore(value: stepsInFlight)
    /// The file's bytes before this offset are queued to be hashed.
    private var handedOver: Int

    /// Goes on from `accumulator`, the hashes of the file's first `offset` bytes; nil when the
    /// file's descriptor cannot be duplicated (the caller hashes inline).
    init?(continuing accumulator: DigestAccumulator, at offset: Int, descriptor: Int32) {
        let own = dup(descriptor)
        guard own >= 0 else {
            buffer.deallocate()
            return nil
        }
        self.accumulator = accumulator
        self.descriptor = own
        handedOver = offset
    }

    /// The file is written up to `end`: queues the steps that are complete (all of them when
    /// `whole`), waiting for a free slot when `stepsInFlight` are queued.
    func written(upTo end: Int, whole: Bool = false) {
        while end - handedOver >= Self.stepSize || whole && end > handedOver {
            let (from, to) = (handedOver, min(end, handedOver + Self.stepSize))
            slots.wait()
            Self.queue.async { [self] in
                hash(from..<to)
                slots.signal()
            }
            handedOver = to
        }
    }

    /// On the queue: reads `range` of the file and hashes it.
    private func hash(_ range: Range<Int>) {
        if !readFailed, !accumulator.update(reading: range, of: descriptor, through: buffer) { readFailed = true }
    }

    /// The hashes of the file's bytes up to `end` once the queue has read them all; nil when a
    /// read failed.
    func finish(upTo end: Int) -> DigestAccumulator? {
        written(upTo: end, whole: true)
        return Self.queue.sync { readFailed ? nil : accumulator }
    }

    // Queued steps hold `self`: none is left, and every slot is back.
    deinit {
        close(descriptor)
        buffer.deallocate()
    }
}
