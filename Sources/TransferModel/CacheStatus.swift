/// Where a task's response came from (the task's `cacheStatus`; null until it has one).
public enum CacheStatus: String, Codable, Sendable, CaseIterable {
    /// From the origin, as any uncached transfer.
    case network
    /// From the URL cache, with no request sent.
    case cache
    /// From the URL cache after the origin answered a conditional request with 304 Not Modified.
    case revalidated
}

/// URLCache.StoragePolicy: where a response is about to be kept (`willCacheResponse`).
public enum CacheStoragePolicy: String, Codable, Sendable, CaseIterable {
    case allowed, allowedInMemoryOnly, notAllowed
}
