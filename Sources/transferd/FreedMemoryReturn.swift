internal import Dispatch
internal import Glibc

/// Gives the pages of memory the daemon freed back to the kernel once a second
/// (glibc's `malloc_trim(0)`, which releases the whole free pages inside each arena, not only
/// at its top).
///
/// Why: glibc keeps what a thread frees in that thread's arena for reuse, and gives back only
/// what lies at an arena's top. A burst (a batch of 10,000 tasks: its stored records, its 201,
/// written on every core) leaves tens of MiB free in several arenas; part (d) of
/// bench/scheduler.sh read 0.92-1.14 KiB per queued task at 100,000 from run to run, depending
/// on how those holes fell, and 0.91 in every run with this. A trim with nothing to give back
/// walks the arenas' free lists and returns; the timer is a utility queue's, never a transfer's
/// or a request's thread.
enum FreedMemoryReturn {
    static func start() {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        // Looked up because Glibc's Swift module leaves <malloc.h> out; RTLD_DEFAULT is 0.
        let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "transferd.malloc-trim", qos: .utility))
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(250))
        timer.setEventHandler { _ = trim(0) }
        timer.resume()
        source = timer
    }

    /// Held for the daemon's life.
    nonisolated(unsafe) private static var source: (any DispatchSourceTimer)?
}
