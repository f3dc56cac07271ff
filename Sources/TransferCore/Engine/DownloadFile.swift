internal import FoundationEssentials
internal import Glibc

/// Where a download's bytes go: a partial file under the data folder while it runs, moved to
/// its final path only once the transfer succeeded, so no partial file ever appears there.
struct DownloadTarget: Sendable {
    /// `<data>/partial/<task id>.part`.
    let partialPath: String
    /// The client's destination, already resolved under the downloads root; nil for the default.
    let destinationPath: String?
    /// Where a download without a destination lands: `<data>/files/<task id>/`, plus the
    /// response's suggested filename.
    let defaultDirectory: String
    /// The downloads root; the final path's folder must resolve (symlinks followed) inside it.
    let root: String
    /// The digest the file must have (the task's `checksum`); checked before it is moved.
    var checksum: Checksum? = nil
}

/// The open partial file of one running download. One thread only (not Sendable): the engine
/// thread, or a file: URL copy's worker. Plain POSIX writes, which land in the page cache at
/// memory speed, so they do not hold up other transfers.
final class DownloadFile {
    private var descriptor: Int32
    let target: DownloadTarget
    private(set) var written = 0
    /// The digest of the bytes written, and what it must match (`DownloadDigest`).
    private var digest: DownloadDigest
    /// The file's digest, once `finish` verified it.
    private(set) var finalDigest: TaskDigest?

    /// Opens the partial file: empty, or kept up to `resumeAt` bytes. A file shorter than that
    /// (data lost since the offset was recorded) is detected: `written` says what is really there.
    init(target: DownloadTarget, resumeAt offset: Int = 0) throws(TaskError) {
        self.target = target
        digest = DownloadDigest(checksum: target.checksum)
        try FileSystem.makeDirectories(FileSystem.parent(of: target.partialPath))
        // Read-write: a resumed download's kept bytes are read back once for its digest.
        let flags = O_RDWR | O_CREAT | O_CLOEXEC | (offset > 0 ? 0 : O_TRUNC)
        descriptor = open(target.partialPath, flags, 0o666)  // the umask applies, as for curl -o
        guard descriptor >= 0 else {
            throw TaskError(.cannotCreateFile, "cannot create \(target.partialPath): \(FileSystem.lastError)")
        }
        if offset > 0 {
            truncate(to: min(offset, FileSystem.size(of: target.partialPath) ?? 0))
        }
    }

    /// A second descriptor of the file, for an fdatasync off the engine thread (-1 on failure).
    func duplicateDescriptor() -> Int32 { dup(descriptor) }

    /// Cuts the file to `length` bytes and writes on from there.
    func truncate(to length: Int) {
        ftruncate(descriptor, off_t(length))
        lseek(descriptor, off_t(length), SEEK_SET)
        written = length
        digest.truncated(to: length)
    }

    /// Appends bytes; false when the disk refused them (full, I/O error).
    func write(_ bytes: RawSpan) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let result = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if result < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += result
            }
            digest.wrote(buffer, at: written, descriptor: descriptor)
            written += buffer.count
            return true
        }
    }

    /// The final response's head: a digest header in it is checked too (`Checksum.announced`).
    func expectDigest(announcedBy response: ResponseInfo, method: String) {
        digest.expect(Checksum.announced(by: response, method: method))
    }

    /// Closes the file and moves it to its final path; returns that path. A file whose digest
    /// does not match its checksum (or the server's digest) is deleted instead: no wrong file is
    /// ever moved into place.
    func finish(suggestedFilename: String?) throws(TaskError) -> String {
        switch digest.verify(descriptor, length: written) {
        case .success(let digest):
            finalDigest = digest
        case .failure(let error):
            discard()
            throw error
        }
        close()
        let finalPath = target.destinationPath
            ?? target.defaultDirectory + "/" + (suggestedFilename ?? "download")
        let folder = FileSystem.parent(of: finalPath)
        // Checked again now, before the folders are made and after: a symlink planted after the
        // task was created must lead neither the file nor a folder out of the downloads root.
        let staysInside = { [target] in target.destinationPath == nil || FileSystem.isInside(folder, root: target.root) }
        let outside = TaskError(.cannotWriteToFile, "the destination's folder resolves outside the downloads root")
        do {
            guard staysInside() else { throw outside }
            try FileSystem.makeDirectories(folder)
            guard staysInside() else { throw outside }
            try FileSystem.move(target.partialPath, to: finalPath)
        } catch let error as TaskError {
            discard()
            throw error
        } catch {
            discard()
            throw TaskError(.cannotWriteToFile, "cannot move the download to \(finalPath): \(error)")
        }
        return finalPath
    }

    /// Closes and deletes the partial file.
    func discard() {
        close()
        unlink(target.partialPath)
    }

    private func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
