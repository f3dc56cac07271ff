internal import Glibc

/// glibc's malloc settings for a long-running daemon.
enum MallocSettings {
    /// Fixes the size from which glibc maps a block on its own: 640 KiB.
    ///
    /// Why fixed: glibc raises the mmap threshold each time a mapped block is freed, up to
    /// 32 MiB. The service's tables free large blocks as they grow, so afterwards every buffer
    /// below the raised threshold (the scheduler's and the change feed's tables, a batch's
    /// answer) came from the arenas and left holes there that were never given back: with
    /// 100,000 queued tasks about 1 KiB per task of freed memory stayed in the process
    /// (docs/benchmarks.md, "Where a queued task's memory goes"). Setting it turns the raising
    /// off.
    /// Why 640 KiB and not glibc's 128 KiB start: every transfer's libcurl receive buffer is
    /// 512 KiB (`Transfer.configure`), allocated when it connects and freed when it ends; above
    /// the threshold that was an mmap and an munmap (with a TLB flush on every core) per
    /// transfer, 8 % of the engine thread's time in a run of 16 KiB downloads. Just above that
    /// buffer, not higher: 1 MiB, with a 2 MiB trim threshold, kept 0.07 KiB more per queued
    /// task in the arenas (bench/scheduler.sh part d: 0.92 at 128 KiB, 0.94 at 640 KiB, 0.99 at
    /// 1 MiB and trim 2 MiB).
    /// An operator's own MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES is left to win.
    static func apply(_ environment: [String: String]) {
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["GLIBC_TUNABLES"] == nil,
              let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        // Looked up because Glibc's Swift module leaves <malloc.h> out; RTLD_DEFAULT is 0.
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(mmapThreshold, 640 * 1024)
    }

    /// M_MMAP_THRESHOLD of <malloc.h>.
    private static let mmapThreshold: Int32 = -3
}
