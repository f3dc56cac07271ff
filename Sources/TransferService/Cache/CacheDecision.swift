internal import FoundationEssentials
internal import TransferModel

/// What the URL cache does for one GET, decided from the request's cache policy, its own
/// Cache-Control, and the stored response (if any) selected for it.
enum CacheDecision: Equatable, Sendable {
    /// Answer with the stored response; send nothing.
    case serve
    /// Send the request with these conditional headers; a 304 serves the stored body.
    case revalidate([String: String])
    /// Send the request (with these extra headers) and use what comes back.
    case load([String: String])
    /// Fail: only the cache was allowed and it has nothing (resourceUnavailable).
    case fail

    /// The decision for `policy` (URLRequest.CachePolicy) given `stored` at `now`.
    ///
    /// useProtocolCachePolicy follows RFC 9111: a fresh response is served (within the request's
    /// max-age and min-fresh, or stale within its max-stale unless the response says
    /// must-revalidate); a stale or no-cache one is revalidated when it has a validator, else
    /// loaded again. returnCacheDataElseLoad and returnCacheDataDontLoad serve any stored
    /// response "regardless of its age or expiration date" (Apple's words), must-revalidate and
    /// no-cache included: the client chose stale data over the network.
    static func decide(policy: CachePolicy, request: CacheControl, stored: CachedResponse?, now: Date) -> CacheDecision {
        switch policy {
        case .reloadIgnoringLocalCacheData:
            return .load([:])
        case .reloadIgnoringLocalAndRemoteCacheData:
            // Apple never implemented it; here it also asks caches on the way not to answer.
            return .load(["Cache-Control": "no-cache", "Pragma": "no-cache"])
        case .returnCacheDataElseLoad:
            return stored == nil ? .load([:]) : .serve
        case .returnCacheDataDontLoad:
            return stored == nil ? .fail : .serve
        case .reloadRevalidatingCacheData:
            return stored.flatMap { conditionalHeaders(for: $0) }.map(CacheDecision.revalidate) ?? .load([:])
        case .useProtocolCachePolicy:
            guard let stored else { return request.onlyIfCached ? .fail : .load([:]) }
            if isServable(stored, request: request, now: now) { return .serve }
            if request.onlyIfCached { return .fail }
            return conditionalHeaders(for: stored).map(CacheDecision.revalidate) ?? .load([:])
        }
    }

    /// Whether RFC 9111 lets the stored response answer without asking the origin.
    static func isServable(_ stored: CachedResponse, request: CacheControl, now: Date) -> Bool {
        let response = stored.directives
        guard !request.noCache, !response.noCache else { return false }
        let lifetime = CacheFreshness.lifetime(of: stored)
        let age = CacheFreshness.currentAge(of: stored, now: now)
        if let maxAge = request.maxAge, age > TimeInterval(maxAge) { return false }
        if let minFresh = request.minFresh, lifetime - age < TimeInterval(minFresh) { return false }
        if lifetime > age { return true }
        // Stale: only if the request accepts that much staleness and the response allows it.
        guard let maxStale = request.maxStale, !response.mustRevalidate else { return false }
        return maxStale == CacheControl.anyStaleness || age - lifetime <= TimeInterval(maxStale)
    }

    /// If-None-Match from the ETag and If-Modified-Since from Last-Modified (RFC 9111 section
    /// 4.3.1), sent as stored; nil when the response has neither validator.
    static func conditionalHeaders(for stored: CachedResponse) -> [String: String]? {
        var headers: [String: String] = [:]
        if let etag = stored.header("ETag") { headers["If-None-Match"] = etag }
        if let lastModified = stored.header("Last-Modified") { headers["If-Modified-Since"] = lastModified }
        return headers.isEmpty ? nil : headers
    }
}

extension CachedResponse {
    /// Header fields a 304 never changes in the stored response: hop-by-hop fields, the body's
    /// framing, and, as Chromium does, the `Content-*` fields (a 304 describes no content; some
    /// servers send their default Content-Type on it).
    private static func isKeptOnNotModified(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasPrefix("content-") || ["connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                                               "proxy-authenticate", "proxy-authorization", "www-authenticate"].contains(lower)
    }

    /// The stored response after a 304 (RFC 9111 section 4.3.4): the 304's header fields replace
    /// the stored ones of the same name, and its timing replaces the stored timing.
    func updated(byNotModified headers: [String: String], requestTime: Date, responseTime: Date) -> CachedResponse {
        var merged = self
        for (name, value) in headers where !Self.isKeptOnNotModified(name) {
            for existing in merged.headers.keys where existing.lowercased() == name.lowercased() {
                merged.headers[existing] = nil
            }
            merged.headers[name] = value
        }
        merged.requestTime = requestTime
        merged.responseTime = responseTime
        return merged
    }
}
