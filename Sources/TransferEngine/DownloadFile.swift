internal import FoundationEssentials
internal import Glibc
package import TransferModel

/// Where a download's bytes go: a partial file under the data folder while it runs, moved to
/// its final path only once the transfer succeeded, so no partial file ever appears there.
package struct DownloadTarget: Sendable {
    /// `<data>/partial/<task id>.part`.
    let partialPath: String
    /// The client's destination, already resolved under the downloads root; nil for the default.
    let destinationPath: String?
    /// Where a download without a destination lands: `<data>/files/<task id>/`, plus the
    /// response's suggested filename.
    let defaultDirectory: String
    /// The task's downloads root (its tenant's, `TenantDownloads`); the final path's folder
    /// must resolve (symlinks followed) inside it.
    let root: String
    /// What happens when the destination exists as the download finishes.
    var conflict: DownloadConflict = .fail
    /// The digest the file must have (the task's `checksum`); checked before it is moved.
    var checksum: Checksum? = nil

    /// The memberwise initializer, for the layers above.
    package init(
        partialPath: String,
        destinationPath: String? = nil,
        defaultDirectory: String,
        root: String,
        conflict: DownloadConflict = .fail,
        checksum: Checksum? = nil
    ) {
        self.partialPath = partialPath
        self.destinationPath = destinationPath
        self.defaultDirectory = defaultDirectory
        self.root = root
        self.conflict = conflict
        self.checksum = checksum
    }
}

/// The open partial file of one running download. One thread only (not Sendable): the engine
/// thread, or a file: URL copy's worker. Plain POSIX writes, which land in the page cache at
/// memory speed, so they do not hold up other transfers.
final class DownloadFile {
    private var descriptor: Int32
    let target: DownloadTarget
    /// Bytes in the file, and any gathered to be written: they are written out first, so that
    /// whoever reads this (a resume offset, a segment plan) finds them in the file. Gathered
    /// bytes nobody asked for are never written after the fact (not even as the file is let go:
    /// the file may be someone else's by then); a file that lost them is shorter than counted,
    /// which a resume detects.
    var written: Int {
        writeGathered()
        return length
    }
    /// Bytes in the file.
    private var length = 0
    /// Past `DownloadDigest.inlineBytes`, a plain download's chunks are gathered into larger
    /// writes (`GatheredWrites`); never a segmented one's, whose offsets its plan counts itself.
    private var gathered: GatheredWrites?
    private var gathers = true
    /// Why writing gathered bytes failed: nothing more is written, and `finish` fails.
    private var writeError: String?
    /// The digest of the bytes written, and what it must match (`DownloadDigest`).
    private var digest: DownloadDigest
    /// The file's digest, once `finish` verified it.
    private(set) var finalDigest: TaskDigest?

    /// Opens the partial file: empty, or kept up to `resumeAt` bytes. A file shorter than that
    /// (data lost since the offset was recorded) is detected: `written` says what is really there.
    /// `keepingParts`: a segmented download's file, whose parts beyond `offset` are kept too
    /// (it is as long as the resource); only a file shorter than that is cut at `offset`.
    init(target: DownloadTarget, resumeAt offset: Int = 0, keepingParts: Bool = false) throws(TaskError) {
        self.target = target
        digest = DownloadDigest(checksum: target.checksum)
        // The common case, a new download with no file left from before: one exclusive create
        // (the folder check, the link count and size reads below were three more system calls
        // per 16 KiB download). Anything else takes the careful way.
        if offset == 0 {
            descriptor = open(target.partialPath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if descriptor >= 0 { return }
        } else {
            descriptor = -1
        }
        try FileSystem.makeDirectories(FileSystem.parent(of: target.partialPath))
        // (A segmented download resumed with nothing in its first part starts a new plan, so its
        // file starts anew too: `EngineLoop.plan(for:)` restores recorded parts only past 0.)
        if offset == 0 {
            descriptor = try Self.createAnew(target.partialPath)
            return
        }
        // A partial file with a second name was placed at its destination with link(2) and the
        // daemon stopped before it removed this name: writing on would change the placed file.
        // This name is let go; the download starts a new partial file.
        var info = stat()
        if stat(target.partialPath, &info) == 0, info.st_nlink > 1 { unlink(target.partialPath) }
        // Read-write: a resumed download's kept bytes are read back once for its digest.
        descriptor = open(target.partialPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)  // the umask applies, as for curl -o
        guard descriptor >= 0 else {
            throw TaskError(.cannotCreateFile, "cannot create \(target.partialPath): \(FileSystem.lastError)")
        }
        let size = FileSystem.size(of: target.partialPath) ?? 0
        if offset > 0, keepingParts, size > offset {
            lseek(descriptor, off_t(offset), SEEK_SET)
            length = offset
            gathers = false
        } else if offset > 0 {
            truncate(to: min(offset, size))
        }
    }

    /// A new, empty file at `path` (a new inode), whatever was there. A download that starts
    /// from zero never truncates a file it finds: whoever may still hold that file open keeps
    /// writing into it, not into this download. In a cluster that is a node that lost its lease
    /// and has not noticed yet (`LeasedPartials`): its late bytes, possibly of another version of
    /// the resource, must not mix with its successor's. Alone, it is a placed file's second name.
    private static func createAnew(_ path: String) throws(TaskError) -> Int32 {
        for _ in 0..<3 {
            if unlink(path) != 0, errno != ENOENT { break }
            let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)  // the umask applies, as for curl -o
            if descriptor >= 0 { return descriptor }
            if errno != EEXIST { break }
        }
        throw TaskError(.cannotCreateFile, "cannot create \(path): \(FileSystem.lastError)")
    }

    /// Starts the file again from zero, as a new file (`createAnew`): the range asked for was
    /// refused and the whole resource follows. Gathered bytes of the old answer are dropped.
    func startOver() {
        gathered?.clear()
        close()
        do {
            descriptor = try Self.createAnew(target.partialPath)
        } catch {
            writeError = error.message
        }
        length = 0
        digest.truncated(to: 0)
    }

    /// A second descriptor of the file, for an fdatasync off the engine thread (-1 on failure).
    /// Gathered bytes are written first, so that the sync covers every byte counted.
    func duplicateDescriptor() -> Int32 {
        writeGathered()
        return dup(descriptor)
    }

    /// Cuts the file to `length` bytes and writes on from there.
    func truncate(to length: Int) {
        writeGathered()
        ftruncate(descriptor, off_t(length))
        lseek(descriptor, off_t(length), SEEK_SET)
        self.length = length
        digest.truncated(to: length)
    }

    /// Appends bytes; false when the disk refused them (full, I/O error).
    func write(_ bytes: RawSpan) -> Bool {
        guard writeError == nil else { return false }
        return bytes.withUnsafeBytes { buffer in
            if gathered == nil, gathers, length >= DownloadDigest.inlineBytes { gathered = GatheredWrites() }
            guard let gathered else { return writeOut(buffer) }
            var rest = buffer
            while !rest.isEmpty {
                rest = gathered.append(rest)
                if gathered.isFull, !writeGathered() { return false }
            }
            return true
        }
    }

    /// Writes `buffer` at the file's end and hashes it; false when the disk refused it.
    private func writeOut(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let result = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += result
        }
        digest.wrote(buffer, at: length, descriptor: descriptor)
        length += buffer.count
        return true
    }

    /// Writes the gathered bytes out; false (and nothing written any more) when the disk
    /// refused them.
    @discardableResult
    private func writeGathered() -> Bool {
        guard writeError == nil else { return false }
        guard let gathered, gathered.count > 0 else { return true }
        defer { gathered.clear() }
        guard writeOut(gathered.bytes) else {
            writeError = "cannot write the download: \(FileSystem.lastError)"
            return false
        }
        return true
    }

    /// Writes bytes at `offset` without moving the append position: a part of a segmented
    /// download (`SegmentedDownload`). The digest does not see them: `assembled` has it read the
    /// file back when the download ends. False when the disk refused them.
    func write(_ bytes: RawSpan, at offset: Int) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let result = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
                if result < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                done += result
            }
            return true
        }
    }

    /// Reserves the whole resource's blocks before the parts are written in place, so a full
    /// disk fails the download at once rather than part-way; false when there is no room.
    /// A file system without fallocate gets a sparse file of that length instead.
    func preallocate(_ length: Int) -> Bool {
        writeGathered()
        gathers = false
        let result = posix_fallocate(descriptor, 0, off_t(length))
        if result == 0 { return true }
        if result == ENOSPC || result == EFBIG { return false }
        return ftruncate(descriptor, off_t(length)) == 0
    }

    /// Every part of a segmented download is in place: the file is `length` bytes, and its
    /// digest reads back what it did not see written.
    func assembled(length: Int) {
        writeGathered()
        self.length = length
    }

    /// The final response's head: a digest header in it is checked too (`Checksum.announced`).
    func expectDigest(announcedBy response: ResponseInfo, method: String) {
        digest.expect(Checksum.announced(by: response, method: method))
    }

    /// How a verified file was put in place.
    enum Placement {
        /// At this path: the destination, a renamed one beside it, or the default location.
        case placed(String)
        /// The destination was taken (policy `fail`, or no free name to rename to): the file is
        /// at the task's default location instead, so nothing downloaded is lost.
        case keptAside(String, TaskError)

        /// Where the file is now.
        var path: String {
            switch self {
            case .placed(let path), .keptAside(let path, _): return path
            }
        }
    }

    /// Closes the file and moves it to its final path. A file whose digest does not match its
    /// checksum (or the server's digest) is deleted instead: no wrong file is ever moved into
    /// place. An existing destination is replaced only under the `replace` policy.
    func finish(suggestedFilename: String?) throws(TaskError) -> Placement {
        if !writeGathered(), let writeError {
            discard()
            throw TaskError(.cannotWriteToFile, writeError)
        }
        switch digest.verify(descriptor, length: length) {
        case .success(let digest):
            finalDigest = digest
        case .failure(let error):
            discard()
            throw error
        }
        close()
        let defaultPath = target.defaultDirectory + "/" + (suggestedFilename ?? "download")
        do {
            guard let destination = target.destinationPath else {
                try place(at: defaultPath)
                return .placed(defaultPath)
            }
            let folder = FileSystem.parent(of: destination)
            // Checked again now, before the folders are made and after: a symlink planted after the
            // task was created must lead neither the file nor a folder out of the downloads root.
            // Made only when thrown: a TaskError's message is a String built per call.
            func outside() -> TaskError { TaskError(.cannotWriteToFile, "the destination's folder resolves outside the downloads root") }
            // A folder that is there already is resolved and checked once (mkdir would not
            // touch it); a missing one is checked by its ancestors, made, and checked again.
            if let resolved = FileSystem.resolved(folder) {
                guard FileSystem.isResolved(resolved, inside: target.root) else { throw outside() }
            } else {
                guard FileSystem.isInside(folder, root: target.root) else { throw outside() }
                try FileSystem.makeDirectories(folder)
                guard FileSystem.isInside(folder, root: target.root) else { throw outside() }
            }
            if let path = try placeAtDestination(destination) { return .placed(path) }
            try place(at: defaultPath)
            let taken = target.conflict == .rename ? "it and \(ConflictNames.limit) renamed forms of it exist" : "it exists"
            var error = TaskError(.cannotCreateFile, "the destination \(destination) was not replaced: \(taken) (conflict: \(target.conflict.rawValue)); the download is kept at \(defaultPath)")
            error.reason = DownloadConflict.destinationExistsReason
            return .keptAside(defaultPath, error)
        } catch let error as TaskError {
            discard()
            throw error
        } catch {
            discard()
            throw TaskError(.cannotWriteToFile, "cannot move the download into place: \(error)")
        }
    }

    /// Puts the file at `destination` as the conflict policy says; nil when it is taken (and
    /// no renamed form is free). Never check-then-move: the no-replace placing is one atomic
    /// step (link(2)), so of two downloads finishing to one name at once exactly one gets it.
    private func placeAtDestination(_ destination: String) throws -> String? {
        switch target.conflict {
        case .replace:
            try FileSystem.move(target.partialPath, to: destination)
            return destination
        case .fail:
            return try FileSystem.placeWithoutReplacing(target.partialPath, at: destination) ? destination : nil
        case .rename:
            for candidate in ConflictNames(destination) where try FileSystem.placeWithoutReplacing(target.partialPath, at: candidate) {
                return candidate
            }
            return nil
        }
    }

    /// Moves the file to `path` in a folder of this task's own (the default location).
    private func place(at path: String) throws {
        try FileSystem.makeDirectories(FileSystem.parent(of: path))
        try FileSystem.move(target.partialPath, to: path)
    }

    /// Closes and deletes the partial file.
    func discard() {
        gathered = nil
        close()
        unlink(target.partialPath)
    }

    private func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
