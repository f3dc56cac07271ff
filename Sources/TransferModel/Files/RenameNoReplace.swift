internal import Glibc

/// renameat2(2) with RENAME_NOREPLACE: a rename that fails with EEXIST instead of replacing.
/// Looked up at run time because Glibc's Swift module leaves it out (it needs _GNU_SOURCE);
/// ext4, xfs, btrfs and tmpfs have it, some network and FUSE file systems answer EINVAL, and
/// then `FileSystem.placeWithoutReplacing` uses link(2) as before.
enum RenameNoReplace {
    enum Result { case renamed, exists, unsupported }

    static func rename(_ source: String, _ destination: String) -> Result {
        guard let function else { return .unsupported }
        if function(atCurrentDirectory, source, atCurrentDirectory, destination, noReplace) == 0 { return .renamed }
        switch errno {
        case EEXIST: return .exists
        default: return .unsupported  // EINVAL, ENOSYS, EXDEV...: the link path decides and reports
        }
    }

    private typealias Function = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32

    private static let function: Function? = {
        // RTLD_DEFAULT is 0.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }()

    private static let atCurrentDirectory: Int32 = -100  // AT_FDCWD
    private static let noReplace: UInt32 = 1  // RENAME_NOREPLACE
}
