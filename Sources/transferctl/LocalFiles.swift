internal import Glibc

/// A file being fetched: written to `NAME.part` and renamed to NAME only once complete, so an
/// interrupted or failed fetch never leaves a truncated file under the real name; or stdout
/// (`-o -`). Owned by the subcommand that fetches (not Sendable).
final class OutputFile: ResponseSink {
    let path: String
    private let descriptor: Int32
    private let partialPath: String?
    private(set) var bytesWritten: Int64 = 0
    private(set) var writeError: String?

    var isStandardOutput: Bool { partialPath == nil }

    init(path: String) throws {
        self.path = path
        if path == "-" {
            descriptor = 1
            partialPath = nil
            return
        }
        let partial = path + ".part"
        let opened = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard opened >= 0 else { throw CLIFailure(.localFile, "cannot write \(partial): \(LocalFileError.text())") }
        descriptor = opened
        partialPath = partial
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard StandardStreams.writeAll(bytes, to: descriptor) else {
            writeError = "cannot write \(partialPath ?? "stdout"): \(LocalFileError.text())"
            return false
        }
        bytesWritten += Int64(bytes.count)
        return true
    }

    /// Closes the file and gives it its name.
    func commit() throws {
        guard let partialPath else { return }
        guard close(descriptor) == 0 else { throw CLIFailure(.localFile, "cannot write \(partialPath): \(LocalFileError.text())") }
        guard rename(partialPath, path) == 0 else { throw CLIFailure(.localFile, "cannot rename \(partialPath) to \(path): \(LocalFileError.text())") }
    }

    /// Closes and removes the partial file.
    func discard() {
        guard let partialPath else { return }
        close(descriptor)
        unlink(partialPath)
    }
}

/// `get -C -`: the rest of a file appended to what is there. The file must still end at
/// `offset` when it is opened; on any failure it is cut back to `offset`, so a failed append
/// leaves the file as it was. Owned by the subcommand that fetches (not Sendable).
final class AppendingFile: ResponseSink {
    let path: String
    let offset: Int64
    private let descriptor: Int32
    private(set) var bytesWritten: Int64 = 0

    init(path: String, offset: Int64) throws {
        self.path = path
        self.offset = offset
        let opened = open(path, O_WRONLY | O_CLOEXEC)
        guard opened >= 0 else { throw CLIFailure(.localFile, "cannot write \(path): \(LocalFileError.text())") }
        guard lseek(opened, 0, SEEK_END) == off_t(offset) else {
            close(opened)
            throw CLIFailure(.localFile, "\(path) changed size while it downloaded: not appended")
        }
        descriptor = opened
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard StandardStreams.writeAll(bytes, to: descriptor) else { return false }
        bytesWritten += Int64(bytes.count)
        return true
    }

    /// Closes the file, checking it now holds `total` bytes when that is known.
    func commit(total: Int64?) throws {
        let size = lseek(descriptor, 0, SEEK_END)
        guard total == nil || Int64(size) == total else {
            discard()
            throw CLIFailure(.transferFailed, "\(path) would hold \(size) bytes, not the \(total ?? 0) the server announced: cut back to \(offset)")
        }
        guard close(descriptor) == 0 else { throw CLIFailure(.localFile, "cannot write \(path): \(LocalFileError.text())") }
    }

    /// Cuts the file back to what it was and closes it.
    func discard() {
        _ = ftruncate(descriptor, off_t(offset))
        close(descriptor)
    }
}

/// A local file's size and time, for `-C -`; nil when it is not a regular file.
enum LocalFileState {
    static func sizeAndTime(_ path: String) -> (size: Int64, modified: Int)? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int64(status.st_size), Int(status.st_mtim.tv_sec))
    }

    /// Gives `path` the time `seconds` (`-R`: the server's Last-Modified); best effort.
    static func setModified(_ path: String, seconds: Int) {
        var times = [timespec(tv_sec: time_t(seconds), tv_nsec: 0), timespec(tv_sec: time_t(seconds), tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }
}

/// A local file read as a request body (`post --file`), seekable for a resend. Owned by the
/// subcommand that uploads (not Sendable).
final class InputFile {
    let path: String
    let size: Int
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        let opened = open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else { throw CLIFailure(.localFile, "cannot read \(path): \(LocalFileError.text())") }
        let end = lseek(opened, 0, SEEK_END)
        guard end >= 0, lseek(opened, 0, SEEK_SET) == 0 else {
            close(opened)
            throw CLIFailure(.localFile, "cannot read \(path): not a regular file")
        }
        descriptor = opened
        size = Int(end)
    }

    deinit { close(descriptor) }

    /// The whole file (small files only), nil on a read error.
    func readAll() -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: size)
        let count = bytes.withUnsafeMutableBytes { raw in Glibc.read(descriptor, raw.baseAddress, raw.count) }
        return count == size ? bytes : nil
    }

    /// The next bytes into `buffer`: their count (0 at the end), nil on a read error.
    func read(into buffer: inout MutableRawSpan) -> Int? {
        let count = buffer.withUnsafeMutableBytes { raw in Glibc.read(descriptor, raw.baseAddress, raw.count) }
        return count < 0 ? nil : count
    }

    func seek(to offset: Int) -> Bool { lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) }
}

/// Small text files: resume data saved by `cancel --resume-data` and read by `resume-from`, and
/// `get -i`'s list of URLs.
enum TextFile {
    /// Everything on stdin (`get -i -`), at most 64 MiB.
    static func readStandardInput() throws -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if count < 0 { throw CLIFailure(.localFile, "cannot read stdin: \(LocalFileError.text())") }
            if count == 0 { break }
            bytes += chunk[..<count]
            if bytes.count > 64 << 20 { throw CLIFailure(.localFile, "stdin holds more than 64 MiB of URLs") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func read(_ path: String) throws -> String {
        let file = try InputFile(path: path)
        guard let bytes = file.readAll() else { throw CLIFailure(.localFile, "cannot read \(path): \(LocalFileError.text())") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to `path` (owner-only: resume data names a partial file), replacing it.
    static func write(_ text: String, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CLIFailure(.localFile, "cannot write \(path): \(LocalFileError.text())") }
        defer { close(descriptor) }
        var text = text
        let written = text.withUTF8 { StandardStreams.writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
        guard written else { throw CLIFailure(.localFile, "cannot write \(path): \(LocalFileError.text())") }
    }
}

/// errno as text.
enum LocalFileError {
    static func text() -> String { String(cString: strerror(errno)) }
}
