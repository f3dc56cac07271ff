internal import LibCrypto
internal import FoundationEssentials
internal import Glibc
internal import Synchronization
public import TransferModel

/// One blob being written: a hidden temporary file, its size and its running SHA-256.
///
/// Made by `BlobStore.makeWriter(owner:)` for one upload and owned by it: the HTTP layer writes
/// the body into it chunk by chunk, then `commit()` or `discard()` ends it (later calls do
/// nothing or throw). Sendable so the upload can be committed on another thread than the one
/// that wrote it; the lock is uncontended (one owner at a time) and only orders those hand-overs.
public final class BlobWriter: Sendable {
    private struct State {
        /// The temporary file; -1 once committed or discarded.
        var fd: Int32
        var size = 0
        var hasher = StreamingHash(.sha256)
    }

    public let id: String
    private let owner: String?
    private let temporaryPath: String
    private let finalPath: String
    private let blobs: BlobStore
    private let state: Mutex<State>

    init(id: String, owner: String?, temporaryPath: String, finalPath: String, blobs: BlobStore) throws(BlobStoreError) {
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .fromErrno("create \(temporaryPath)") }
        self.id = id
        self.owner = owner
        self.temporaryPath = temporaryPath
        self.finalPath = finalPath
        self.blobs = blobs
        state = Mutex(State(fd: fd))
    }

    /// The safety net for a writer dropped without commit() or discard() (a bug): the
    /// descriptor is closed and the temporary file removed. Plain POSIX calls, no callbacks.
    deinit {
        discard()
    }

    /// Bytes written so far.
    public var size: Int { state.withLock { $0.size } }

    /// Appends `bytes` to the file and the digest.
    public func write(_ bytes: RawSpan) throws(BlobStoreError) {
        try bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) throws(BlobStoreError) in
            try state.withLock { (s: inout State) throws(BlobStoreError) in
                guard s.fd >= 0 else { throw .failed("write after the blob was ended") }
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(s.fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw .fromErrno("write")
                    }
                    offset += written
                }
                s.hasher.update(buffer)
                s.size += buffer.count
            }
        }
    }

    /// Makes the blob durable and visible: fsync, rename to its id, fsync the folder, record the
    /// row. On failure nothing is left behind (no file, no row). With a `limit`, the owner's
    /// blobs may hold at most that many bytes with this one (its disk quota less what its tasks
    /// hold); past it the blob is discarded (`BlobStoreError.overQuota`).
    /// - SeeAlso: https://man7.org/linux/man-pages/man2/fsync.2.html (a new name is durable
    ///   only once its directory is synced).
    public func commit(limit: Int? = nil) throws(BlobStoreError) -> Blob {
        let (fd, size, digest) = try state.withLock { (s: inout State) throws(BlobStoreError) in
            guard s.fd >= 0 else { throw .failed("commit after the blob was ended") }
            defer { s.fd = -1 }
            return (s.fd, s.size, hexString(s.hasher.finalize()))
        }
        // Checked again when the row is recorded, under the lock that counts the bytes.
        if let limit, blobs.heldBytes(owner: owner) + size > limit {
            close(fd)
            unlink(temporaryPath)
            throw .overQuota(held: blobs.heldBytes(owner: owner))
        }
        guard fsync(fd) == 0 else {
            let error = BlobStoreError.fromErrno("fsync")
            close(fd)
            unlink(temporaryPath)
            throw error
        }
        close(fd)
        guard rename(temporaryPath, finalPath) == 0 else {
            let error = BlobStoreError.fromErrno("rename")
            unlink(temporaryPath)
            throw error
        }
        Self.syncDirectory(of: finalPath)
        // Whole seconds, as served (RFC 3339 without fraction): the stored value then reads back
        // exactly, so GET answers what POST did.
        let createdAt = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let blob = Blob(id: id, size: size, sha256: digest, createdAt: createdAt, owner: owner)
        do {
            try blobs.record(blob, limit: limit)
        } catch {
            unlink(finalPath)
            if let error = error as? BlobStoreError { throw error }
            // The row is written at once (commit before publish): a full disk here is the
            // client's 507 like a full disk for the bytes, not an internal error.
            if StoreFailure(error).kind == .diskFull { throw .insufficientStorage }
            throw .failed("record the blob: \(error)")
        }
        return blob
    }

    /// Ends the blob without keeping it: the temporary file is removed. Idempotent.
    public func discard() {
        let fd = state.withLock { s in
            defer { s.fd = -1 }
            return s.fd
        }
        guard fd >= 0 else { return }
        close(fd)
        unlink(temporaryPath)
    }

    private static func syncDirectory(of path: String) {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let fd = open(String(path[..<slash]), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
