internal import FoundationEssentials
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// Every URL cache of the service, and which one a session uses: default sessions share
/// URLCache.shared (memory and disk, capacities from the daemon's flags, kept across restarts);
/// an ephemeral session has a private memory-only cache, made on first use and dropped when the
/// session is invalidated; background sessions have none (URLSession's background
/// configuration has no urlCache either). Owned by `TransferService`.
public final class URLCaches: SessionScopedStore {
    /// URLCache.shared, for every default session.
    public let shared: URLCache
    private let privateCaches = Mutex<[String: URLCache]>([:])
    private let defaultMemoryCapacity: Int
    private let logger: Logger

    init(configuration: ServiceConfiguration, store: any TaskStore, logger: Logger) throws {
        shared = try URLCache(
            memoryCapacity: configuration.urlCacheMemoryCapacity, diskCapacity: configuration.urlCacheDiskCapacity,
            directory: configuration.dataDirectory + "/cache", store: store, logger: logger)
        defaultMemoryCapacity = configuration.urlCacheMemoryCapacity
        self.logger = logger
    }

    /// A session's `urlCache` as it takes effect, decided once when the session is made:
    /// background: none. Default: the shared cache, so its capacities (a default session cannot
    /// resize URLCache.shared, a process-wide object); null keeps it without a cache. Ephemeral:
    /// its own memory capacity (the shared memory capacity when left out), disk always 0.
    func resolve(_ requested: URLCacheConfiguration?, kind: SessionKind) -> URLCacheConfiguration? {
        guard let requested, kind != .background else { return nil }
        switch kind {
        case .default, .background:
            return URLCacheConfiguration(memoryCapacity: shared.memoryCapacity, diskCapacity: shared.diskCapacity)
        case .ephemeral:
            let memory = requested.memoryCapacity == URLCacheConfiguration.unset ? defaultMemoryCapacity : requested.memoryCapacity
            return URLCacheConfiguration(memoryCapacity: memory, diskCapacity: 0)
        }
    }

    /// The cache `session` reads and writes, or nil when it has none.
    func cache(for session: Session) -> URLCache? {
        guard let configuration = resolve(session.configuration.urlCache, kind: session.kind) else { return nil }
        guard session.kind == .ephemeral else { return shared }
        return privateCaches.withLock { caches in
            if let cache = caches[session.id] { return cache }
            let cache = URLCache(memoryCapacity: configuration.memoryCapacity, label: "transferd.urlcache.ephemeral", logger: logger)
            caches[session.id] = cache
            return cache
        }
    }

    // MARK: SessionScopedStore

    /// URLSession.reset: empties the session's cache (the shared one for a default session) and
    /// deletes its files.
    func reset(session: Session, requester: String?) {
        cache(for: session)?.removeAll(tenant: requester)
    }

    /// Body files are written as responses are stored; this waits until they are.
    public func flush() {
        shared.flush()
    }

    /// An invalidated ephemeral session's private cache goes with it.
    func discard(session: Session) {
        guard session.kind == .ephemeral else { return }
        _ = privateCaches.withLock { $0.removeValue(forKey: session.id) }
    }
}
