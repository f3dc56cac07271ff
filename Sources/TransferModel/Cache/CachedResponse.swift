package import FoundationEssentials

/// A stored response's head and what its freshness is computed from; its body is kept apart (in
/// memory or in a file). Stored as JSON in the `url_cache` table for the persistent cache.
package struct CachedResponse: Codable, Sendable, Equatable {
    package var statusCode: Int
    package var headers: [String: String]
    /// The URL the response is for (the cache key's URL).
    var url: String
    /// The request header values the response varies on (RFC 9111 section 4.1), by lowercased
    /// name; a header the request did not send is absent. Empty when there is no Vary.
    var varyingRequestHeaders: [String: String]
    /// When the request that fetched or last validated it was sent, and when its answer came
    /// (request_time and response_time of RFC 9111 section 4.2.3).
    package var requestTime: Date
    package var responseTime: Date

    /// The response as a task reports it.
    package var info: ResponseInfo { ResponseInfo(statusCode: statusCode, headers: headers, url: url) }

    package func header(_ name: String) -> String? { ResponseInfo.value(of: name, in: headers) }

    package var directives: CacheControl { CacheControl(headers: headers, isRequest: false) }

    /// Whether a conditional request can validate it.
    var hasValidators: Bool { header("ETag") != nil || header("Last-Modified") != nil }

    /// The header names listed in Vary, lowercased ("*" included as is).
    package static func varyNames(_ headers: [String: String]) -> [String] {
        (ResponseInfo.value(of: "Vary", in: headers) ?? "").split(separator: ",").map { $0.trimmed().lowercased() }.filter { !$0.isEmpty }
    }

    /// The values of `names` in a request's headers, by lowercased name (absent ones left out).
    package static func values(of names: [String], in requestHeaders: [String: String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in names {
            if let value = ResponseInfo.value(of: name, in: requestHeaders) { values[name] = value.trimmed() }
        }
        return values
    }

    /// Whether a new request selects this response: it sends the same values for every header
    /// the response varies on. `Vary: *` never matches (such responses are not stored anyway).
    package func matches(requestHeaders: [String: String]) -> Bool {
        let names = Self.varyNames(headers)
        guard !names.contains("*") else { return false }
        return Self.values(of: names, in: requestHeaders) == varyingRequestHeaders
    }

    /// The memberwise initializer, for the layers above.
    package init(
        statusCode: Int,
        headers: [String: String],
        url: String,
        varyingRequestHeaders: [String: String],
        requestTime: Date,
        responseTime: Date
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
        self.varyingRequestHeaders = varyingRequestHeaders
        self.requestTime = requestTime
        self.responseTime = responseTime
    }
}
