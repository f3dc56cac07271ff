internal import Dispatch
internal import Glibc

/// Gives the pages of memory the daemon freed back to the kernel after a burst: glibc's
/// `malloc_trim(0)`, which releases the whole free pages inside each arena, not only at its top.
///
/// Why: glibc keeps what a thread frees in that thread's arena for reuse, and gives back only
/// what lies at an arena's top. A burst (a batch of 10,000 tasks: its stored records, its 201,
/// written on every core) leaves tens of MiB free in several arenas; part (d) of
/// bench/scheduler.sh read 0.92-1.14 KiB per queued task at 100,000 from run to run, depending
/// on how those holes fell; 0.90-0.98 in five runs with this.
///
/// When: a utility timer looks at the resident size once a second (/proc/self/statm, one small
/// read) and trims only when it grew by `growth` since the last trim. A trim walks every free
/// chunk of every arena under that arena's lock: in a C test with 1.5 million free chunks in a
/// 3 GB heap it took 270-290 ms even with nothing to give back, so a trim every second would
/// stall a big daemon's allocations; trimming on growth costs a steady daemon nothing, and a heap
/// with many free chunks does not grow until they are used up again. With a 16 MiB step part (d)
/// read 0.96-0.97 (the last batch's holes stayed); with 4 MiB, 0.90-0.98.
enum FreedMemoryReturn {
    /// Growth of the resident size that makes the next tick trim.
    static let growth = 4 << 20

    static func start() {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        // Looked up because Glibc's Swift module leaves <malloc.h> out; RTLD_DEFAULT is 0.
        let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        let queue = DispatchQueue(label: "transferd.malloc-trim", qos: .utility)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        nonisolated(unsafe) var trimmedAt = residentBytes() ?? 0  // only touched on `queue`
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(250))
        timer.setEventHandler {
            guard let resident = residentBytes() else { return }
            if resident >= trimmedAt + growth {
                _ = trim(0)
                trimmedAt = residentBytes() ?? resident
            } else if resident < trimmedAt {
                trimmedAt = resident  // it shrank by itself: growth counts from here
            }
        }
        timer.resume()
        source = timer
    }

    /// The resident size (the second field of /proc/self/statm, in pages), nil where unreadable.
    static func residentBytes() -> Int? {
        let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { buffer -> Int? in
            let count = read(descriptor, buffer.baseAddress!, buffer.count)
            guard count > 0 else { return nil }
            let fields = UnsafeBufferPointer(rebasing: buffer[..<count]).split(separator: 0x20)
            guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
            return pages * sysconf(Int32(_SC_PAGESIZE))
        }
    }

    /// Held for the daemon's life.
    nonisolated(unsafe) private static var source: (any DispatchSourceTimer)?
}
