internal import FoundationEssentials
internal import TransferModel
internal import TransferEngine

/// What the URL cache does for one attempt of a task, kept in its `TaskEntry` by the service.
struct CacheTaskContext: Sendable {
    enum Role: Sendable, Equatable {
        /// A GET sent to the origin: a storable answer is stored.
        case store
        /// A GET sent with the validators of the stored response: a 304 serves the stored body.
        case revalidate
        /// Answered by the cache: no transfer; its body is being read.
        case serving
        /// An unsafe method: its success drops the stored response of its URL (RFC 9111 section 4.4).
        case invalidate
    }

    var role: Role
    let cache: URLCache
    /// The request URL, the cache key.
    let url: String
    /// The part of the cache this task reads and writes: its tenant's, for its session's trust.
    let partition: CachePartition
    /// The task's request headers, for Vary and the request's Cache-Control.
    let requestHeaders: [String: String]
    /// When the request was handed to the engine, and when its response head came.
    let requestTime: Date
    var responseTime: Date?
    /// The origin's 304, held until the transfer ends and the stored response is served.
    var notModified: ResponseInfo?
    /// The next attempt skips the cache (the stored body went while it was being used).
    var bypassesCache = false
}

/// A data task's completion held while its client decides whether the response is cached
/// (willCacheResponse as a decision, issue 21): what to store, and the completion to go on with.
struct CacheDecisionHold: Sendable {
    let context: CacheTaskContext
    let response: ResponseInfo
    let body: Data
    let completion: TransferUpdate
}
