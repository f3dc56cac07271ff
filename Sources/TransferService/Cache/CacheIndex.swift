internal import FoundationEssentials
internal import TransferModel

/// The entries of one URL cache and its two LRU tiers, as a value: memory (bodies held here) and
/// disk (bodies in files). Which tier holds what, and what to evict, is decided here without I/O;
/// `URLCache` carries out the file work this returns. Capacities count body bytes.
///
/// An entry lives while some tier holds it. A tier takes a body only up to 1/20 of its capacity
/// (Apple's URLCache keeps responses "no larger than about 5% of the disk cache size"), so one
/// large response cannot empty it.
struct CacheIndex: Sendable {
    struct Entry: Sendable {
        var response: CachedResponse
        var size: Int
        /// The body, while the memory tier holds it or its file is still being written.
        var body: Data?
        var inMemory: Bool
        /// The body's file name under the cache folder, when the disk tier holds it.
        var file: String?
        /// Whether the file is still being written (the body is kept in memory until then).
        var writing = false
        var lastUse: UInt64
    }

    /// File work the cache must do after a change: files to write (from their entry's body)
    /// and files to delete.
    struct DiskWork: Sendable, Equatable {
        var write: [String] = []
        var delete: [String] = []
        var isEmpty: Bool { write.isEmpty && delete.isEmpty }
    }

    let memoryCapacity: Int
    let diskCapacity: Int
    private(set) var entries: [String: Entry] = [:]
    private(set) var memoryBytes = 0
    private(set) var diskBytes = 0
    private var clock: UInt64 = 0

    init(memoryCapacity: Int, diskCapacity: Int) {
        self.memoryCapacity = memoryCapacity
        self.diskCapacity = diskCapacity
    }

    /// Whether a body of `size` bytes fits each tier (1/20 of its capacity).
    func fits(_ size: Int) -> (memory: Bool, disk: Bool) {
        (size <= memoryCapacity / 20 && memoryCapacity > 0, size <= diskCapacity / 20 && diskCapacity > 0)
    }

    /// The entry for `key`, marked as just used.
    mutating func use(_ key: String) -> Entry? {
        guard entries[key] != nil else { return nil }
        clock += 1
        entries[key]?.lastUse = clock
        return entries[key]
    }

    func peek(_ key: String) -> Entry? { entries[key] }

    /// Stores a response and its body under `key`, replacing what was there, in the tiers it fits
    /// (the disk one only with `file`), then evicts least recently used entries over capacity.
    /// Returns false (and changes nothing) when no tier takes it.
    mutating func insert(_ key: String, _ response: CachedResponse, body: Data, file: String?, work: inout DiskWork) -> Bool {
        let fit = fits(body.count)
        let toDisk = fit.disk && file != nil
        guard fit.memory || toDisk else { return false }
        remove(key, work: &work)
        clock += 1
        entries[key] = Entry(response: response, size: body.count, body: body, inMemory: fit.memory,
                             file: toDisk ? file : nil, writing: toDisk, lastUse: clock)
        if fit.memory { memoryBytes += body.count }
        if toDisk, let file {
            diskBytes += body.count
            work.write.append(file)
        }
        evict(work: &work)
        return true
    }

    /// A stored response found on disk at start-up (least recently used first).
    mutating func restore(_ key: String, _ response: CachedResponse, size: Int, file: String) {
        clock += 1
        entries[key] = Entry(response: response, size: size, body: nil, inMemory: false, file: file, lastUse: clock)
        diskBytes += size
    }

    /// Replaces a stored response's head (after a 304); the body stays.
    mutating func update(_ key: String, _ response: CachedResponse) {
        entries[key]?.response = response
    }

    /// A file finished writing: the memory tier keeps the body only if it holds it.
    mutating func written(_ key: String, file: String) {
        guard let entry = entries[key], entry.file == file else { return }
        entries[key]?.writing = false
        if !entry.inMemory { entries[key]?.body = nil }
    }

    /// A body read from disk moves into the memory tier too, if it fits there.
    mutating func promote(_ key: String, body: Data, work: inout DiskWork) {
        guard let entry = entries[key], !entry.inMemory, entry.size == body.count, fits(entry.size).memory else { return }
        entries[key]?.inMemory = true
        entries[key]?.body = body
        memoryBytes += entry.size
        evict(work: &work)
    }

    mutating func remove(_ key: String, work: inout DiskWork) {
        guard let entry = entries.removeValue(forKey: key) else { return }
        if entry.inMemory { memoryBytes -= entry.size }
        if let file = entry.file {
            diskBytes -= entry.size
            work.delete.append(file)
        }
    }

    /// A body file could not be written: the disk tier lets go of it.
    mutating func lostFile(_ key: String, file: String, work: inout DiskWork) {
        guard let entry = entries[key], entry.file == file else { return }
        diskBytes -= entry.size
        entries[key]?.file = nil
        entries[key]?.writing = false
        if !entry.inMemory { entries[key] = nil }
    }

    /// Evicts down to the capacities (after a restart with smaller ones).
    mutating func trim(work: inout DiskWork) { evict(work: &work) }

    mutating func removeAll(work: inout DiskWork) {
        for key in Array(entries.keys) { remove(key, work: &work) }
    }

    /// Least recently used first, out of each tier until it is within capacity; an entry no tier
    /// holds any more goes.
    private mutating func evict(work: inout DiskWork) {
        if memoryBytes > memoryCapacity {
            for (key, entry) in entries.filter({ $0.value.inMemory }).sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard memoryBytes > memoryCapacity else { break }
                memoryBytes -= entry.size
                entries[key]?.inMemory = false
                if entry.file == nil {
                    entries[key] = nil
                } else if !entry.writing {
                    entries[key]?.body = nil
                }
            }
        }
        if diskBytes > diskCapacity {
            for (key, entry) in entries.filter({ $0.value.file != nil }).sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard diskBytes > diskCapacity, let file = entry.file else { break }
                diskBytes -= entry.size
                work.delete.append(file)
                entries[key]?.file = nil
                entries[key]?.writing = false
                if !entry.inMemory { entries[key] = nil }
            }
        }
    }
}
