internal import LibCrypto
internal import Glibc

/// The daemon's finished file moved into place instead of copied over HTTP, when the daemon runs
/// on this host, on the same file system, and its file may be renamed by this user. The daemon
/// reports where its copy is (`location`); a file found there is taken only if it is a regular
/// file of the task's size whose SHA-256 is the task's digest, so a file of the same path on
/// another host is never mistaken for it. It goes to `TARGET.part` first and gets its name only
/// once checked (a mismatch goes back where it was), so the target is never replaced by a wrong
/// file. Anything else (another host, another file system, no permission): the caller copies.
enum LocalMove {
    static func into(_ target: String, from location: String, size: Int64, sha256: String?) -> Bool {
        guard let sha256, location.hasPrefix("/") else { return false }
        var status = stat()
        guard lstat(location, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, Int64(status.st_size) == size else { return false }
        let partial = target + ".part"
        guard rename(location, partial) == 0 else { return false }
        guard digest(of: partial) == sha256, rename(partial, target) == 0 else {
            rename(partial, location)
            return false
        }
        return true
    }

    /// The file's SHA-256 in lower-case hex, nil when it cannot be read.
    static func digest(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var hasher = StreamingHash(.sha256)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { return nil }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
        return hasher.finalize().map { byte in
            let hex = Array("0123456789abcdef")
            return String([hex[Int(byte >> 4)], hex[Int(byte & 15)]])
        }.joined()
    }
}
