internal import FoundationEssentials
internal import Glibc

/// The few file operations downloads need, as POSIX calls with errors that say what failed.
package enum FileSystem {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    package static var lastError: String { String(cString: strerror(errno)) }

    /// The size of a regular file, or nil when there is none.
    package static func size(of path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// `path` made absolute against the working directory, with empty, `.` and `..` components
    /// removed lexically (symlinks are kept as named).
    package static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var components: [Substring] = []
        for component in full.split(separator: "/") where component != "." {
            if component == ".." { _ = components.popLast() } else { components.append(component) }
        }
        return "/" + components.joined(separator: "/")
    }

    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    package static func makeDirectories(_ path: String) throws(TaskError) {
        // The common case in one call: the folder is there already (every download's partial
        // folder and most destinations' folders), or only its last level is missing.
        if mkdir(path, 0o777) == 0 || (errno == EEXIST && isDirectory(path)) { return }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw TaskError(.cannotCreateFile, "cannot create the folder \(path): \(error)")
        }
    }

    /// Whether `path` is a folder (symlinks followed).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The path with every symlink resolved, or nil when it does not exist. The kernel resolves
    /// it in one open (O_PATH) and names what it found (/proc/self/fd): three system calls,
    /// where realpath(3) makes a readlink per component (a quarter of a batch POST's CPU for
    /// its destinations). realpath where /proc is not there.
    package static func resolved(_ path: String) -> String? {
        let descriptor = open(path, Self.pathOnly | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let name = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(PATH_MAX)) { buffer -> String? in
            let length = readlink("/proc/self/fd/\(descriptor)", buffer.baseAddress!, buffer.count)
            // "/" first: not " (deleted)" or a pipe; shorter than the buffer: not cut.
            guard length > 0, length < buffer.count, buffer[0] == 0x2F else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<length]), as: UTF8.self)
        }
        if let name, !name.hasSuffix(" (deleted)") { return name }
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// O_PATH (Linux, the same value on every architecture we build for), which Glibc's module
    /// does not export: it needs _GNU_SOURCE.
    private static let pathOnly: Int32 = 0o10_000_000

    /// Whether `path` resolves (symlinks followed) to `root` or below it. A path that does not
    /// exist yet is judged by its deepest existing ancestor, which is where mkdir would start.
    package static func isInside(_ path: String, root: String) -> Bool {
        var existing = path
        var resolvedPath = resolved(existing)
        while resolvedPath == nil, existing != "/", existing != "." {
            existing = parent(of: existing)
            resolvedPath = resolved(existing)
        }
        guard let resolvedPath else { return false }
        return isResolved(resolvedPath, inside: root)
    }

    /// Whether `resolvedPath` (a path `resolved` gave) is `root` or below it.
    package static func isResolved(_ resolvedPath: String, inside root: String) -> Bool {
        guard let resolvedRoot = ResolvedRoots.resolved(root) else { return false }
        return resolvedPath == resolvedRoot || resolvedPath.hasPrefix(resolvedRoot.hasSuffix("/") ? resolvedRoot : resolvedRoot + "/")
    }

    /// Atomically renames; across file systems, copies to a hidden temporary name beside the
    /// final one and renames that, so the final name never shows partial content.
    package static func move(_ source: String, to destination: String) throws {
        if rename(source, destination) == 0 { return }
        guard errno == EXDEV else { throw Failure(description: lastError) }
        let temporary = parent(of: destination) + "/.transferd-\(UUID().uuidString).tmp"
        do {
            try FileManager.default.copyItem(atPath: source, toPath: temporary)
            guard rename(temporary, destination) == 0 else { throw Failure(description: lastError) }
            unlink(source)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Puts `source` at `destination` unless a name is there already (any file, folder or
    /// symlink): then it returns false and `source` stays. renameat2(RENAME_NOREPLACE), or
    /// link(2) where the file system has no such rename, creates the name or fails with EEXIST
    /// in one step, so of two callers racing for one name exactly one gets it (a check followed
    /// by rename(2) would let both "win", the second replacing the first). Across file systems
    /// the bytes are copied to a hidden name beside the destination first.
    package static func placeWithoutReplacing(_ source: String, at destination: String) throws -> Bool {
        // One system call instead of link and unlink (a download of 16 KiB spent 4 % of the
        // engine thread's time on the pair).
        switch RenameNoReplace.rename(source, destination) {
        case .renamed: return true
        case .exists: return false
        case .unsupported: break
        }
        if link(source, destination) == 0 {
            unlink(source)
            return true
        }
        switch errno {
        case EEXIST:
            return false
        case EXDEV:
            let temporary = parent(of: destination) + "/.transferd-\(UUID().uuidString).tmp"
            defer { unlink(temporary) }
            try FileManager.default.copyItem(atPath: source, toPath: temporary)
            guard link(temporary, destination) == 0 else {
                if errno == EEXIST { return false }
                throw Failure(description: lastError)
            }
            unlink(source)
            return true
        case EPERM, EOPNOTSUPP, EMLINK:
            // A file system without hard links: the name is claimed with O_EXCL (as atomic),
            // then the file renamed over that empty claim.
            let claim = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard claim >= 0 else {
                if errno == EEXIST { return false }
                throw Failure(description: lastError)
            }
            Glibc.close(claim)
            do {
                try move(source, to: destination)
            } catch {
                unlink(destination)
                throw error
            }
            return true
        default:
            throw Failure(description: lastError)
        }
    }
}
