internal import FoundationEssentials
internal import TransferModel

/// Freshness and age of a stored response (RFC 9111 section 4.2) and whether a response may be
/// stored at all (section 3), as a private cache computes them. Pure functions of the response
/// and a clock, so they are tested without I/O.
enum CacheFreshness {
    /// Statuses whose responses may be given a heuristic lifetime (RFC 9110 section 15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
    /// Heuristic lifetime: this fraction of the time since Last-Modified (RFC 9111 section 4.2.2)...
    static let heuristicFraction = 0.1
    /// ...but never more than a day.
    static let heuristicCap: TimeInterval = 86_400

    /// freshness_lifetime (section 4.2.1): max-age, else Expires minus Date, else the heuristic
    /// for cacheable statuses with Last-Modified, else 0. A private cache ignores s-maxage.
    static func lifetime(of response: CachedResponse) -> TimeInterval {
        let directives = response.directives
        if directives.invalidMaxAge { return 0 }
        if let maxAge = directives.maxAge { return TimeInterval(maxAge) }
        if let expires = response.header("Expires") {
            // An invalid Expires (such as "0") is a time in the past.
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(dateValue(of: response)))
        }
        let heuristic = heuristicallyCacheable.contains(response.statusCode) || directives.isPublic
        if heuristic, let text = response.header("Last-Modified"), let lastModified = HTTPDate.parse(text) {
            let since = dateValue(of: response).timeIntervalSince(lastModified)
            return min(heuristicCap, max(0, since * heuristicFraction))
        }
        return 0
    }

    /// current_age (section 4.2.3): the age the origin and intermediaries gave it, plus the
    /// network delay, plus the time it has been kept here.
    static func currentAge(of response: CachedResponse, now: Date) -> TimeInterval {
        let ageValue = response.header("Age").flatMap { CacheControl.seconds($0.trimmed()) }.map(TimeInterval.init) ?? 0
        let apparentAge = max(0, response.responseTime.timeIntervalSince(dateValue(of: response)))
        let responseDelay = max(0, response.responseTime.timeIntervalSince(response.requestTime))
        let correctedAgeValue = ageValue + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(response.responseTime))
        return correctedInitialAge + residentTime
    }

    /// date_value: the Date header, or when the response arrived if it has none (or a bad one).
    static func dateValue(of response: CachedResponse) -> Date {
        response.header("Date").flatMap(HTTPDate.parse) ?? response.responseTime
    }

    /// Whether a response to a GET may be stored (section 3): not no-store on either side, not
    /// `Vary: *`, and a status that is final and either heuristically cacheable or given an
    /// explicit lifetime. With `shared`, as the cache of a daemon with tokens, whose partition
    /// serves every client of a token, also section 3.5 and 5.2.2.7: never a `private` response,
    /// and one to a request that carried Authorization only when the response allows its reuse
    /// (public, must-revalidate or s-maxage). Without tokens it is one user's private cache.
    static func isStorable(_ response: ResponseInfo, request: CacheControl, shared: Bool = false, authorized: Bool = false) -> Bool {
        let directives = CacheControl(headers: response.headers, isRequest: false)
        guard !request.noStore, !directives.noStore else { return false }
        if shared {
            guard !directives.isPrivate else { return false }
            guard !authorized || directives.isPublic || directives.mustRevalidate || directives.hasSharedMaxAge else { return false }
        }
        // 206 is a range, which this cache neither asks for nor combines; 304 has no body.
        guard response.statusCode >= 200, response.statusCode != 206, response.statusCode != 304 else { return false }
        guard !CachedResponse.varyNames(response.headers).contains("*") else { return false }
        let explicit = directives.maxAge != nil || directives.invalidMaxAge || ResponseInfo.value(of: "Expires", in: response.headers) != nil
        return heuristicallyCacheable.contains(response.statusCode) || explicit || directives.isPublic
    }
}
