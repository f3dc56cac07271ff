internal import FoundationEssentials
internal import Dispatch
internal import Glibc
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// One URL cache: URLCache.shared (memory and disk, shared by default sessions, kept across
/// restarts) or an ephemeral session's private memory-only cache. Owned by `URLCaches`; all
/// members may be used from any thread.
///
/// The index (`CacheIndex`) is in memory behind a lock held only for in-memory work, so the
/// service may consult it under its own lock. Everything that touches the disk (writing and
/// deleting body files, reading a body that is not in memory, the `url_cache` rows) runs on the
/// cache's serial queue, in the order it was decided, never on the engine thread.
public final class URLCache: Sendable {
    private let index: Mutex<CacheIndex>
    /// Where body files go (`<data>/cache`); nil for a memory-only cache.
    let directory: String?
    private let store: (any TaskStore)?
    private let queue: DispatchQueue
    private let logger: Logger

    public var memoryCapacity: Int { index.withLock { $0.memoryCapacity } }
    public var diskCapacity: Int { index.withLock { $0.diskCapacity } }
    /// Bytes of bodies held in memory and on disk now.
    public var usage: (memory: Int, disk: Int) { index.withLock { ($0.memoryBytes, $0.diskBytes) } }

    /// A memory-only cache (an ephemeral session's): nothing of it ever reaches the disk.
    init(memoryCapacity: Int, label: String, logger: Logger) {
        index = Mutex(CacheIndex(memoryCapacity: memoryCapacity, diskCapacity: 0))
        directory = nil
        store = nil
        queue = DispatchQueue(label: label)
        self.logger = logger
    }

    /// The persistent cache: loads the index from `store` and makes the folder and the table agree.
    init(memoryCapacity: Int, diskCapacity: Int, directory: String, store: any TaskStore, logger: Logger) throws {
        self.directory = directory
        self.store = store
        self.logger = logger
        queue = DispatchQueue(label: "transferd.urlcache.shared")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var loaded = CacheIndex(memoryCapacity: memoryCapacity, diskCapacity: diskCapacity)
        var work = CacheIndex.DiskWork()
        let rows = try store.loadURLCacheRows()
        var kept: Set<String> = []
        for row in rows where FileSystem.size(of: directory + "/" + row.file) == row.size && !row.file.hasPrefix(".") {
            loaded.restore(row.key, row.response, size: row.size, file: row.file)
            kept.insert(row.file)
        }
        // A smaller --url-cache-disk than last time: the least recently used go now.
        loaded.trim(work: &work)
        index = Mutex(loaded)
        for row in rows where !kept.contains(row.file) { try store.deleteURLCacheRow(file: row.file) }
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where !kept.contains(name) {
            unlink(directory + "/" + name)  // left by a crash between writing a file and its row
        }
        perform(work)
    }

    // MARK: reading

    /// The stored response a GET of `url` with `requestHeaders` selects (its Vary matches),
    /// marked as used. In-memory only: safe under the service's lock.
    func lookup(url: String, partition: CachePartition, requestHeaders: [String: String]) -> CachedResponse? {
        let key = partition.key(url)
        guard let entry = index.withLock({ index -> CacheIndex.Entry? in
            guard let entry = index.peek(key), entry.response.matches(requestHeaders: requestHeaders) else { return nil }
            return index.use(key)
        }) else { return nil }
        if let file = entry.file, let store {
            let now = Date().timeIntervalSince1970
            queue.async { try? store.touchURLCacheRow(file: file, lastUsed: now) }
        }
        return entry.response
    }

    /// Reads the body of the response stored for `url` on the cache's queue and hands it to
    /// `completion` there, with the stored head at that moment; nil when it is gone (cleared,
    /// evicted, or its file unreadable).
    func readBody(url: String, partition: CachePartition, _ completion: @escaping @Sendable ((CachedResponse, Data)?) -> Void) {
        let key = partition.key(url)
        queue.async { [self] in
            guard let entry = index.withLock({ $0.peek(key) }) else { return completion(nil) }
            if let body = entry.body { return completion((entry.response, body)) }
            guard let file = entry.file, let directory,
                  let body = try? Data(contentsOf: URL(fileURLWithPath: directory + "/" + file)), body.count == entry.size else {
                var work = CacheIndex.DiskWork()
                index.withLock { $0.remove(key, work: &work) }
                perform(work)
                return completion(nil)
            }
            var work = CacheIndex.DiskWork()
            index.withLock { $0.promote(key, body: body, work: &work) }
            perform(work)
            completion((entry.response, body))
        }
    }

    // MARK: writing

    /// Stores a response to a GET of `url` (replacing the one there) in the tiers that take it.
    /// Returns where it went: allowed (memory and/or disk) or allowedInMemoryOnly; notAllowed
    /// when no tier takes a body of its size.
    @discardableResult
    func store(url: String, partition: CachePartition, requestHeaders: [String: String], response: ResponseInfo, body: Data, requestTime: Date, responseTime: Date,
               memoryOnly: Bool = false) -> CacheStoragePolicy {
        let varying = CachedResponse.values(of: CachedResponse.varyNames(response.headers), in: requestHeaders)
        let cached = CachedResponse(statusCode: response.statusCode, headers: response.headers, url: url,
                                    varyingRequestHeaders: varying, requestTime: requestTime, responseTime: responseTime)
        let key = partition.key(url)
        let file = directory == nil || memoryOnly ? nil : Self.randomName()
        var work = CacheIndex.DiskWork()
        let entry = index.withLock { index -> CacheIndex.Entry? in
            index.insert(key, cached, body: body, file: file, work: &work) ? index.peek(key) : nil
        }
        perform(work)
        guard let entry else { return .notAllowed }
        return entry.file == nil ? .allowedInMemoryOnly : .allowed
    }

    /// The storage policy a response of `size` bytes would get, without storing it.
    func storagePolicy(forSize size: Int) -> CacheStoragePolicy {
        let fit = index.withLock { $0.fits(size) }
        if fit.disk && directory != nil { return .allowed }
        return fit.memory ? .allowedInMemoryOnly : .notAllowed
    }

    /// Applies a 304 to the response stored for `url` (RFC 9111 section 4.3.4); returns the
    /// updated head, or nil when it is no longer stored.
    func refresh(url: String, partition: CachePartition, notModified headers: [String: String], requestTime: Date, responseTime: Date) -> CachedResponse? {
        let key = partition.key(url)
        guard let entry = index.withLock({ index -> CacheIndex.Entry? in
            guard let entry = index.use(key) else { return nil }
            index.update(key, entry.response.updated(byNotModified: headers, requestTime: requestTime, responseTime: responseTime))
            return index.peek(key)
        }) else { return nil }
        if let file = entry.file, let store {
            let now = Date().timeIntervalSince1970
            queue.async { try? store.updateURLCacheResponse(file: file, entry.response, lastUsed: now) }
        }
        return entry.response
    }

    /// Drops what is stored for `url` in the partition's tenant, under every trust (an unsafe
    /// method succeeded on it, RFC 9111 section 4.4: the resource changed for all its sessions).
    func remove(url: String, partition: CachePartition) {
        var work = CacheIndex.DiskWork()
        index.withLock { index in
            for key in index.entries.keys where CachePartition.key(key, belongsTo: partition.tenant, url: url) { index.remove(key, work: &work) }
        }
        perform(work)
    }

    /// URLCache.removeAllCachedResponses for one tenant: its parts, of every trust (nil:
    /// without tokens, everything).
    func removeAll(tenant: String?) {
        guard let tenant else { return removeAll() }
        var work = CacheIndex.DiskWork()
        index.withLock { index in
            for key in index.entries.keys where CachePartition.key(key, belongsTo: tenant) { index.remove(key, work: &work) }
        }
        perform(work)
    }

    /// URLCache.removeAllCachedResponses: empties both tiers and deletes every body file.
    func removeAll() {
        var work = CacheIndex.DiskWork()
        index.withLock { $0.removeAll(work: &work) }
        perform(work)
        guard let directory else { return }
        queue.async {
            // Also anything a write in flight left behind.
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] { unlink(directory + "/" + name) }
        }
    }

    /// Returns once every file operation decided so far is done.
    func flush() { queue.sync {} }

    // MARK: disk work, on the queue

    /// Carries out `work` on the queue, in order: each written file gets its row after it is in
    /// place (written under a hidden name, then renamed); each deleted file loses its row first.
    private func perform(_ work: CacheIndex.DiskWork) {
        guard !work.isEmpty, let directory, let store else { return }
        let writes = index.withLock { index in
            work.write.compactMap { file in
                index.entries.first { $0.value.file == file }.map { (key: $0.key, file: file, entry: $0.value) }
            }
        }
        queue.async { [self] in
            for write in writes {
                guard let body = write.entry.body else { continue }
                let path = directory + "/" + write.file
                let temporary = directory + "/." + write.file
                do {
                    try body.write(to: URL(fileURLWithPath: temporary))
                    guard rename(temporary, path) == 0 else { throw CacheDiskError.rename(errno) }
                    try store.saveURLCacheRow(.init(key: write.key, file: write.file, size: write.entry.size,
                                                    response: write.entry.response, lastUsed: Date().timeIntervalSince1970))
                    index.withLock { $0.written(write.key, file: write.file) }
                } catch {
                    unlink(temporary)
                    unlink(path)
                    logger.warning("url cache: cannot store a body on disk", metadata: ["cache.file": "\(write.file)", "error": "\(error)"])
                    var work = CacheIndex.DiskWork()
                    index.withLock { $0.lostFile(write.key, file: write.file, work: &work) }
                }
            }
            for file in work.delete {
                try? store.deleteURLCacheRow(file: file)
                unlink(directory + "/" + file)
            }
        }
    }

    /// 128 random bits as 32 lowercase hex digits.
    private static func randomName() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

/// A body file could not be put in place.
enum CacheDiskError: Error {
    case rename(Int32)
}
