internal import Glibc

/// glibc's malloc settings for a long-running daemon.
enum MallocSettings {
    /// Fixes the size from which glibc maps a block on its own (1 MiB) and how much free memory
    /// an arena keeps at its top (2 MiB).
    ///
    /// Why fixed: glibc raises the mmap threshold each time a mapped block is freed, up to
    /// 32 MiB. The service's tables free large blocks as they grow, so afterwards every buffer
    /// below the raised threshold (the scheduler's and the change feed's tables, a batch's
    /// answer) came from the arenas and left holes there that were never given back: with
    /// 100,000 queued tasks about 1 KiB per task of freed memory stayed in the process
    /// (docs/benchmarks.md, "Where a queued task's memory goes"). Setting it turns the raising
    /// off.
    /// Why 1 MiB and not glibc's 128 KiB start: every transfer's libcurl receive buffer is
    /// 512 KiB (`Transfer.configure`), allocated when it connects and freed when it ends; above
    /// the threshold that was an mmap and an munmap (with a TLB flush on every core) per
    /// transfer, 8 % of the engine thread's time in a run of 16 KiB downloads. The trim threshold
    /// keeps such a buffer in the arena for the next transfer instead of handing it back.
    /// An operator's own MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES is left to win.
    static func apply(_ environment: [String: String]) {
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["GLIBC_TUNABLES"] == nil,
              let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        // Looked up because Glibc's Swift module leaves <malloc.h> out; RTLD_DEFAULT is 0.
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(mmapThreshold, 1024 * 1024)
        _ = mallopt(trimThreshold, 2 * 1024 * 1024)
    }

    /// M_MMAP_THRESHOLD and M_TRIM_THRESHOLD of <malloc.h>.
    private static let mmapThreshold: Int32 = -3
    private static let trimThreshold: Int32 = -1
}
