internal import TransferModel

/// The digest of a download's partial file, kept as its bytes are written, and the checksums it
/// must match. Owned by its `DownloadFile` (one thread).
///
/// A resumed download (resume data, a checkpoint after a restart or kill -9, a retry) starts with
/// bytes it did not see: OpenSSL has no public way to save and restore a hash's state, so the kept
/// prefix is read back from the file once, which also makes the digest cover exactly the bytes on
/// disk whatever happened to them. That read is spread over the writes that follow (at most
/// `catchUpBudget` bytes per write, so one callback never stalls the engine thread for long on a
/// big file), and finished when the download ends. While it catches up, new bytes are hashed from
/// the file too. A download of at most `inlineBytes` is hashed only by `verify`, which reads it
/// back (from the page cache, just written) where the file is placed, off the engine thread
/// (`FilePlacement`): hashing each write as it came was 7% of the engine thread per 16 KiB file.
/// Past `inlineBytes` all of it is read back from the file off the engine thread
/// (`OffThreadDigest`).
struct DownloadDigest {
    /// Bytes read back from the file per write while catching up (a few ms of SHA-256).
    static let catchUpBudget = 4 * 1024 * 1024

    /// The task's own checksum (nil: none asked for).
    let checksum: Checksum?
    /// The server's digest of the whole representation, from the final response head.
    private(set) var announced: AnnouncedChecksum?
    private var accumulator: DigestAccumulator
    /// Set once the download passed `inlineBytes`: the hashing goes on there, off the engine
    /// thread, from the file (`accumulator` is then its starting state, taken back by `verify`).
    private var offThread: OffThreadDigest?
    /// The file's bytes before this offset are hashed (or left to `offThread`).
    private(set) var hashed = 0
    /// How much of a download is hashed inline before the hashing moves off the engine thread.
    static let inlineBytes = 1024 * 1024
    /// Reading the file back failed: no digest can be given.
    private var unreadable = false

    init(checksum: Checksum?) {
        self.checksum = checksum
        accumulator = DigestAccumulator([checksum?.algorithm].compactMap { $0 })
    }

    /// The final response's digest header, if any, is to be checked too; a new algorithm starts
    /// the hashing over (before any body byte, so nothing is read twice).
    mutating func expect(_ announced: AnnouncedChecksum?) {
        self.announced = announced
        guard let algorithm = announced?.checksum.algorithm, !accumulator.algorithms.contains(algorithm) else { return }
        accumulator = DigestAccumulator([checksum?.algorithm, algorithm].compactMap { $0 })
        offThread = nil
        hashed = 0
    }

    /// The file was cut to `length` bytes.
    mutating func truncated(to length: Int) {
        guard length < hashed else { return }
        accumulator = DigestAccumulator(accumulator.algorithms)
        offThread = nil  // what it still hashes is dropped with it
        hashed = 0
    }

    /// `buffer` was just written at `offset` of `descriptor`'s file.
    mutating func wrote(_ buffer: UnsafeRawBufferPointer, at offset: Int, descriptor: Int32) {
        // Up to `inlineBytes`, left to `verify`.
        guard offset + buffer.count > Self.inlineBytes || offThread != nil else { return }
        if hashed == offset, !movesOffThread(descriptor, end: offset + buffer.count) {
            accumulator.update(buffer)
            hashed += buffer.count
        } else {
            catchUp(descriptor, to: offset + buffer.count, budget: Self.catchUpBudget)
        }
    }

    /// Whether the file's bytes up to `end` are hashed off the engine thread: those of a download
    /// past `inlineBytes` (the hashing moves there then), unless the file's descriptor cannot be
    /// duplicated for it.
    private mutating func movesOffThread(_ descriptor: Int32, end: Int) -> Bool {
        if offThread == nil, end > Self.inlineBytes {
            offThread = OffThreadDigest(continuing: accumulator, at: hashed, descriptor: descriptor)
        }
        return offThread != nil
    }

    /// Reads the file back from `hashed` towards `end`, at most `budget` bytes: off the engine
    /// thread past `inlineBytes`, else here.
    mutating func catchUp(_ descriptor: Int32, to end: Int, budget: Int = .max) {
        guard !unreadable, hashed < end else { return }
        let stop = end - hashed <= budget ? end : hashed + budget  // `hashed + .max` would overflow
        if movesOffThread(descriptor, end: stop), let offThread {
            offThread.written(upTo: stop)
            hashed = stop
            return
        }
        // No bigger than what is read: a 1 MiB buffer for a 16 KiB file was an mmap and munmap.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(1024 * 1024, stop - hashed), alignment: 16)
        defer { buffer.deallocate() }
        guard accumulator.update(reading: hashed..<stop, of: descriptor, through: buffer) else {
            unreadable = true
            return
        }
        hashed = stop
    }

    /// The digest of the file's `length` bytes (read back where needed), or the error the
    /// download fails with: a checksum that does not match, or a file that could not be read.
    mutating func verify(_ descriptor: Int32, length: Int) -> Result<TaskDigest?, TaskError> {
        if hashed > length { truncated(to: length) }
        catchUp(descriptor, to: length)
        if let offThread {
            if let hashes = offThread.finish(upTo: length) { accumulator = hashes } else { unreadable = true }
            self.offThread = nil
        }
        guard !unreadable, hashed == length else {
            guard checksum == nil, announced == nil else {
                return .failure(TaskError(.cannotWriteToFile, "cannot read the download's partial file back to verify its checksum: \(FileSystem.lastError)"))
            }
            return .success(nil)  // nothing to verify: the task just reports no digest
        }
        let digest = accumulator.digest()
        if let checksum, let error = digest.mismatch(checksum, source: "the task's checksum") { return .failure(error) }
        if let announced, let error = digest.mismatch(announced.checksum, source: "the server's \(announced.header)") { return .failure(error) }
        return .success(digest)
    }
}
