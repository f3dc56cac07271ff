internal import Glibc
internal import TransferModel

/// The database holds response bodies, events and the sealed credentials: only the daemon's
/// user may read it. SQLite creates its -wal and -shm files with the database file's
/// permissions (os_unix.c findCreateFileMode), so the database file is created 0600 before
/// SQLite opens it; files a previous version left with looser permissions are tightened.
extension Store {
    static func restrictToOwner(databasePath path: String) throws {
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TaskError(.cannotCreateFile, "cannot create \(path): \(FileSystem.lastError)") }
        Glibc.close(descriptor)
        for file in [path, path + "-wal", path + "-shm"] {
            // A missing -wal or -shm (ENOENT) is fine: SQLite makes it from the database's mode.
            if chmod(file, 0o600) != 0 && errno != ENOENT {
                throw TaskError(.noPermissionsToReadFile, "cannot restrict \(file) to its owner: \(FileSystem.lastError)")
            }
        }
    }
}
