internal import Dispatch

/// A big download's hashing, done on a queue of its own instead of the engine thread.
///
/// Every download's bytes go through SHA-256 (the task's `digest`) and the algorithm of its
/// checksum, if any. On the engine thread that was 40% of the daemon's CPU in a loopback 1 GiB
/// download, which then ran at 0.74x curl; here a second core hashes while the engine thread
/// receives and writes. Small files are hashed inline (`DownloadDigest.inlineBytes`): a copy and
/// a hand-off would cost them more than the hash.
///
/// libcurl hands the write callback at most 16 KiB at a time (CURL_MAX_WRITE_SIZE, whatever the
/// receive buffer), so the chunks are gathered into `bufferSize` buffers, copied once, and one
/// buffer is handed over at a time: a hand-off per 16 KiB (an allocation, a queue item and a
/// thread wake-up each, 65,536 per GiB) cost as much CPU as the copy. The buffers are a ring
/// allocated once; at most `buffersInFlight` wait for the queue (`slots`), so a hasher slower
/// than the network holds the engine back, only as long as it takes to free one buffer, instead
/// of filling memory.
///
/// Unchecked Sendable: `accumulator` is touched only on `queue`; a ring buffer only by the owner
/// while it fills it and by the queue once handed over (`slots` keeps the two apart); the rest
/// only by the owner, which reads the result with `finish`.
final class OffThreadDigest: @unchecked Sendable {
    /// One queue for every download: a core's worth of hashing beside the engine thread.
    private static let queue = DispatchQueue(label: "transferd.engine.digest")
    /// Bytes per hand-off: 32 of libcurl's write callbacks.
    static let bufferSize = 512 * 1024
    /// Buffers handed over and not hashed yet, at most (2 MiB waiting).
    static let buffersInFlight = 4
    private var accumulator: DigestAccumulator
    /// `buffersInFlight` handed over plus the one being filled: the one filled next is always
    /// the oldest, hashed once a slot was free for the one before it.
    private let ring: [UnsafeMutableRawBufferPointer]
    /// Free hand-off slots: taken by the owner before a hand-off, given back by the queue.
    private let slots = DispatchSemaphore(value: buffersInFlight)
    /// The ring buffer being filled, and how much of it is.
    private var current = 0
    private var filled = 0

    init(continuing accumulator: DigestAccumulator) {
        self.accumulator = accumulator
        ring = (0...Self.buffersInFlight).map { _ in .allocate(byteCount: Self.bufferSize, alignment: 64) }
    }

    /// Copies `buffer` into the ring, handing each full buffer over to be hashed.
    func update(_ buffer: UnsafeRawBufferPointer) {
        var rest = buffer
        while !rest.isEmpty {
            let count = min(rest.count, Self.bufferSize - filled)
            UnsafeMutableRawBufferPointer(rebasing: ring[current][filled..<filled + count]).copyMemory(from: UnsafeRawBufferPointer(rebasing: rest[..<count]))
            filled += count
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            if filled == Self.bufferSize { handOver() }
        }
    }

    /// Hashes the filled part of the current buffer on the queue; waits for a free slot first.
    private func handOver() {
        guard filled > 0 else { return }
        slots.wait()
        let (index, count) = (current, filled)
        Self.queue.async { [self] in
            accumulator.update(UnsafeRawBufferPointer(rebasing: ring[index][..<count]))
            slots.signal()
        }
        current = (current + 1) % ring.count
        filled = 0
    }

    /// The hashes of everything handed over, once the queue has taken it all.
    func finish() -> DigestAccumulator {
        handOver()
        return Self.queue.sync { accumulator }
    }

    // Queued hashing holds `self`: nothing is handed over any more, and every slot is back.
    deinit {
        for buffer in ring { buffer.deallocate() }
    }
}
