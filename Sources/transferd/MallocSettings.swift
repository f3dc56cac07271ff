internal import Glibc

/// glibc's malloc settings for a long-running daemon.
enum MallocSettings {
    /// Fixes the size from which glibc maps a block on its own (128 KiB, its default start).
    ///
    /// Why: glibc raises that threshold each time a mapped block is freed, up to 32 MiB. The
    /// service's tables free large blocks as they grow, so afterwards every buffer below the
    /// raised threshold (the scheduler's and the change feed's tables, a batch's answer) came
    /// from the arenas and left holes there that were never given back: with 100,000 queued
    /// tasks about 1 KiB per task of freed memory stayed in the process (docs/benchmarks.md,
    /// "Where a queued task's memory goes"). Setting it turns the raising off. An operator's own
    /// MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES is left to win.
    static func apply(_ environment: [String: String]) {
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["GLIBC_TUNABLES"] == nil,
              let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        // Looked up because Glibc's Swift module leaves <malloc.h> out; RTLD_DEFAULT is 0.
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(mmapThreshold, 128 * 1024)
    }

    /// M_MMAP_THRESHOLD of <malloc.h>.
    private static let mmapThreshold: Int32 = -3
}
