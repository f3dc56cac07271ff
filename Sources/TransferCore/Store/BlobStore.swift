public import FoundationEssentials
internal import Glibc
public import Logging

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
    private let store: Store
    private let logger: Logger
    static let temporaryPrefix = ".upload-"

    init(store: Store, directory: String, logger: Logger) throws {
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
        try store.deleteBlob(id: blob.id)
        unlink(path(ofID: blob.id))
    }

    /// Records a blob whose file is in place (called by `BlobWriter.commit`).
    func record(_ blob: Blob) throws { try store.insertBlob(blob) }

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
            removedRows += 1
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
    /// Any other failure: the operation and the system's reason.
    case failed(String)

    static func fromErrno(_ operation: String) -> BlobStoreError {
        errno == ENOSPC || errno == EDQUOT ? .insufficientStorage : .failed("\(operation): \(String(cString: strerror(errno)))")
    }

    public var description: String {
        switch self {
        case .insufficientStorage: return "no space left for the blob"
        case .failed(let reason): return reason
        }
    }
}
