internal import LibCrypto
internal import FoundationEssentials
internal import Glibc
internal import TransferModel

/// A 32-byte secret key kept in the data folder (`credentials.key`, `resume-data.key`), made on
/// first use. Several daemons may share the folder (a cluster, issue 19) and start at once:
/// a new key is written to a file of its own (0600 from its first byte, synced) and linked into
/// place without replacing, so exactly one node's key becomes the key, and every other node
/// reads that one instead of keeping its own.
enum KeyFile {
    static func load(_ path: String) throws -> Data {
        for _ in 0..<5 {
            if let existing = FileManager.default.contents(atPath: path) {
                if existing.count == 32 {
                    chmod(path, 0o600)  // a copy restored with looser permissions is tightened again
                    return existing
                }
                // A broken file (never one this code makes: it links only whole files) is replaced.
                let fresh = try written(path)
                guard rename(fresh.temporary, path) == 0 else { throw TaskError(.cannotCreateFile, "cannot replace \(path): \(FileSystem.lastError)") }
                return fresh.key
            }
            let fresh = try written(path)
            defer { unlink(fresh.temporary) }
            if try FileSystem.placeWithoutReplacing(fresh.temporary, at: path) { return fresh.key }
            // Another node made it meanwhile: read its key.
        }
        throw TaskError(.cannotCreateFile, "cannot settle on a key in \(path)")
    }

    /// A new key in a temporary file beside `path`.
    private static func written(_ path: String) throws -> (key: Data, temporary: String) {
        guard let bytes = try? SecureRandom.bytes(ChaChaPoly.keyByteCount) else { throw TaskError(.cannotCreateFile, "cannot make a key for \(path): no random bytes") }
        let key = Data(bytes)
        let temporary = path + ".\(UUID().uuidString).tmp"
        let descriptor = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TaskError(.cannotCreateFile, "cannot create \(temporary): \(FileSystem.lastError)") }
        defer { Glibc.close(descriptor) }
        let count = key.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard count == key.count, fsync(descriptor) == 0 else {
            unlink(temporary)
            throw TaskError(.cannotWriteToFile, "cannot write \(temporary): \(FileSystem.lastError)")
        }
        return (key, temporary)
    }
}
