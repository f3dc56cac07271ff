import Foundation
import Glibc
import TestSupport

/// A small tmpfs this test mounts under a temp folder of its own, to fill up: the data folder on
/// a disk that runs out. Needs root (CI and this machine run tests as root); a failed mount
/// throws, so the test fails rather than passing without a full disk. The test calls
/// ``unmount()`` once every daemon using it has stopped.
struct SmallDisk {
    let folder: TempDirectory
    var path: String { folder.path }

    struct MountFailed: Error, CustomStringConvertible {
        let description: String
    }

    init(megabytes: Int) throws {
        folder = try TempDirectory(prefix: "transferd-smalldisk")
        let status = try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", folder.path])
        guard status == 0 else {
            folder.remove()
            throw MountFailed(description: "mount -t tmpfs on \(folder.path) exited \(status) (the test needs root)")
        }
    }

    /// Writes `name` until the disk refuses (ENOSPC); returns the bytes written.
    @discardableResult
    func fill(_ name: String) -> Int {
        let fd = open(path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x5a, count: 64 * 1024)
        var total = 0
        while true {
            let wrote = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard wrote > 0 else { break }
            total += wrote
        }
        return total
    }

    /// Frees what `fill` took.
    func free(_ name: String) {
        unlink(path + "/" + name)
    }

    /// Unmounts (lazily if still busy) and removes the mount point.
    func unmount() {
        if (try? Self.run("/bin/umount", [folder.path])) != 0 {
            _ = try? Self.run("/bin/umount", ["-l", folder.path])
        }
        folder.remove()
    }

    private static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
