internal import FoundationEssentials
internal import Glibc
internal import TransferModel

/// A `file:` URL's file, opened read-only and confined to the daemon's file-URL roots
/// (`--file-url-roots`). Used by one thread only, its file copy's worker (not Sendable): it
/// owns its descriptor.
///
/// Confinement: the path is resolved (symlinks, `..`) and must lie in a resolved root; the
/// resolved path is opened with O_NOFOLLOW, and the opened descriptor's own path
/// (/proc/self/fd) is checked again, so a component swapped for a symlink between the check and
/// the open cannot lead outside. Anything outside gets noPermissionsToReadFile, never bytes.
final class FileURLSource {
    private var descriptor: Int32
    /// The file's size when opened.
    let size: Int
    /// The resolved path (the response's suggested filename comes from it).
    let path: String

    /// Opens the file `url` names; `roots` empty means file: URLs are off (unsupportedURL).
    package init(url: String, roots: [String]) throws(TaskError) {
        guard !roots.isEmpty else {
            throw TaskError(.unsupportedURL, "file: URLs are not enabled on this daemon (--file-url-roots)")
        }
        let requested = try Self.path(of: url)
        let resolvedRoots = roots.compactMap(FileSystem.resolved)
        let outside = TaskError(.noPermissionsToReadFile, "the file is outside the daemon's file-URL roots")
        guard let resolved = FileSystem.resolved(requested) else {
            let missing = errno == ENOENT || errno == ENOTDIR
            // Existence is told only inside a root, judged lexically as the file is not there.
            let lexical = FileSystem.absolute(requested)
            guard missing, (roots.map(FileSystem.absolute) + resolvedRoots).contains(where: { Self.contains(lexical, root: $0) }) else { throw outside }
            throw TaskError(.fileDoesNotExist, "the file does not exist")
        }
        guard resolvedRoots.contains(where: { Self.contains(resolved, root: $0) }) else { throw outside }
        // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below anyway).
        descriptor = open(resolved, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw errno == ENOENT ? TaskError(.fileDoesNotExist, "the file does not exist") : outside
        }
        path = resolved
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { Glibc.close(descriptor); throw outside }
        guard let opened = Self.openedPath(descriptor), resolvedRoots.contains(where: { Self.contains(opened, root: $0) }) else {
            Glibc.close(descriptor)
            throw outside
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: size = Int(info.st_size)
        case S_IFDIR:
            Glibc.close(descriptor)
            throw TaskError(.fileIsDirectory, "the URL names a folder, not a file")
        default:
            Glibc.close(descriptor)
            throw TaskError(.noPermissionsToReadFile, "the URL names a device, socket or pipe, not a regular file")
        }
    }

    /// Reads up to `count` bytes; empty at the end of the file, nil on a read error.
    func read(upTo count: Int) -> Data? {
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let result = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, count) }
            if result < 0, errno == EINTR { continue }
            guard result >= 0 else { return nil }
            return Data(buffer[0..<result])
        }
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }

    /// The local path of a `file:` URL: `file:///p` or `file://localhost/p`, percent-decoded.
    static func path(of url: String) throws(TaskError) -> String {
        guard let parsed = URL(string: url), parsed.scheme?.lowercased() == "file" else {
            throw TaskError(.badURL, "not a file: URL")
        }
        let host = parsed.host ?? ""
        guard host.isEmpty || host.lowercased() == "localhost" else {
            throw TaskError(.unsupportedURL, "file: URLs of another host are not supported")
        }
        let bytes = PercentDecoding.bytes(parsed.path(percentEncoded: true))
        guard bytes.first == UInt8(ascii: "/"), !bytes.contains(0), let path = String(validating: bytes, as: UTF8.self) else {
            throw TaskError(.badURL, "the file: URL has no absolute path")
        }
        return path
    }

    /// Whether the resolved `path` is `root` or below it.
    static func contains(_ path: String, root: String) -> Bool {
        path == root || path.hasPrefix(root.hasSuffix("/") ? root : root + "/")
    }

    /// Where an open descriptor really points, from /proc/self/fd.
    private static func openedPath(_ descriptor: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/fd/\(descriptor)", &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
