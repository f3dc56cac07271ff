internal import FoundationEssentials
internal import Glibc
package import Logging
internal import Synchronization
public import TransferModel

/// The blobs of one data folder: files `<dataDirectory>/blobs/<id>` and their rows in the
/// store (migration 2). Owned by `TransferService`; all members may be used from any thread.
///
/// A blob appears whole or not at all: its content streams to a hidden temporary file (a
/// `BlobWriter`), which is renamed to its id and then recorded. Start-up removes what a crash
/// left between those steps (temporary files, files without a row, rows whose file is missing
/// or of the wrong size), so the folder and the table always agree.
public final class BlobStore: Sendable {
    /// The folder holding the blob files.
    public let directory: String
    private let store: any TaskStore
    private let logger: Logger
    /// The bytes of each owner's blobs (`TenantUsage.key`), summed from the rows at start and
    /// kept with every record and delete: a quota check reads it, never the folder.
    private let heldBytes = Mutex<[String: Int]>([:])
    static let temporaryPrefix = ".upload-"

    package init(store: any TaskStore, directory: String, logger: Logger) throws {
        self.store = store
        self.directory = directory
        self.logger = logger
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try reconcile()
    }

    /// Starts a new blob owned by `owner`; nothing is visible until `BlobWriter.commit()`.
    public func makeWriter(owner: String?) throws(BlobStoreError) -> BlobWriter {
        let id = Self.randomID()
        return try BlobWriter(
            id: id, owner: owner, temporaryPath: directory + "/" + Self.temporaryPrefix + id,
            finalPath: path(ofID: id), blobs: self)
    }

    /// The blob `id` if `owner` may see it; otherwise `ServiceError.notFound` (also for ids of
    /// the wrong shape, which are never looked up).
    public func blob(_ id: String, owner: String?) throws -> Blob {
        guard Blob.isWellFormedID(id), let blob = try store.blob(id: id), blob.isVisible(to: owner) else {
            throw ServiceError.notFound("no blob \(id)")
        }
        return blob
    }

    /// The file holding the blob's content (for upload tasks to read).
    public func path(of blob: Blob) -> String { path(ofID: blob.id) }

    /// Deletes the blob `id` if `owner` may see it (else `ServiceError.notFound`): the row first,
    /// so a crash in between leaves only a file that the next start removes.
    public func delete(_ id: String, owner: String?) throws {
        let blob = try blob(id, owner: owner)
        try heldBytes.withLock { held in
            try store.deleteBlob(id: blob.id)
            held[TenantUsage.key(blob.owner), default: 0] -= blob.size
        }
        unlink(path(ofID: blob.id))
    }

    /// The bytes of the blobs `owner` holds.
    public func heldBytes(owner: String?) -> Int { heldBytes.withLock { $0[TenantUsage.key(owner)] ?? 0 } }

    /// Records a blob whose file is in place (called by `BlobWriter.commit`), unless its owner's
    /// blobs would then hold more than `limit` bytes: checked and recorded under one lock, so
    /// two uploads of one tenant cannot both pass the last free bytes of its quota.
    func record(_ blob: Blob, limit: Int?) throws {
        try heldBytes.withLock { held in
            let key = TenantUsage.key(blob.owner)
            if let limit, (held[key] ?? 0) + blob.size > limit {
                throw BlobStoreError.overQuota(held: held[key] ?? 0)
            }
            try store.insertBlob(blob)
            held[key, default: 0] += blob.size
        }
    }

    private func path(ofID id: String) -> String { directory + "/" + id }

    /// Makes the folder and the table agree after a crash (see the type's comment).
    private func reconcile() throws {
        var rows: [String: Blob] = [:]
        for blob in try store.loadBlobs() { rows[blob.id] = blob }
        var removedFiles = 0, removedRows = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where rows[name] == nil {
            unlink(directory + "/" + name)
            removedFiles += 1
        }
        for blob in rows.values where Self.fileSize(path(ofID: blob.id)) != blob.size {
            try store.deleteBlob(id: blob.id)
            unlink(path(ofID: blob.id))
            rows[blob.id] = nil
            removedRows += 1
        }
        heldBytes.withLock { held in
            for blob in rows.values { held[TenantUsage.key(blob.owner), default: 0] += blob.size }
        }
        if removedFiles > 0 || removedRows > 0 {
            logger.info("blobs reconciled after an unclean stop", metadata: [
                "blobs.files_removed": "\(removedFiles)", "blobs.rows_removed": "\(removedRows)",
            ])
        }
    }

    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// 128 random bits as 32 lowercase hex digits.
    private static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

/// Why storing a blob failed. Never carries content.
public enum BlobStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file system is full or over quota (ENOSPC, EDQUOT).
    case insufficientStorage
    /// The owner's blobs would pass the limit `BlobWriter.commit(limit:)` was given; they hold `held` bytes.
    case overQuota(held: Int)
    /// Any other failure: the operation and the system's reason.
    case failed(String)

    static func fromErrno(_ operation: String) -> BlobStoreError {
        errno == ENOSPC || errno == EDQUOT ? .insufficientStorage : .failed("\(operation): \(String(cString: strerror(errno)))")
    }

    public var description: String {
        switch self {
        case .insufficientStorage: return "no space left for the blob"
        case .overQuota(let held): return "the owner's blobs would pass its disk quota (it holds \(held) bytes)"
        case .failed(let reason): return reason
        }
    }
}
