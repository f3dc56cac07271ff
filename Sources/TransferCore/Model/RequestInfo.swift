public import FoundationEssentials

/// A task's request as it is sent (originalRequest / currentRequest): the client's request with
/// the session's additional headers merged in. The body itself is stored apart; here only its length.
public struct RequestInfo: Codable, Sendable, Equatable {
    public var url: String
    public var method: String
    public var headers: [String: String]
    @NullEncoded public var bodyLength: Int?
    public var cachePolicy: CachePolicy
    public var timeoutInterval: Double
    public var networkServiceType: NetworkServiceType
}

extension RequestInfo {
    /// Builds the request a task sends from what the client posted and its session's configuration.
    init(spec: RequestSpec, bodyLength: Int?, configuration: SessionConfiguration) {
        var headers = spec.headers
        let given = Set(headers.keys.map { $0.lowercased() })
        for (name, value) in configuration.httpAdditionalHeaders where !given.contains(name.lowercased()) {
            headers[name] = value
        }
        // After the merge, so a session-wide Content-Type also counts as set.
        if let implied = spec.body?.impliedContentType, headers.keys.allSatisfy({ $0.lowercased() != "content-type" }) {
            headers["Content-Type"] = implied
        }
        self.init(
            url: spec.url,
            method: spec.method,
            headers: headers,
            bodyLength: bodyLength,
            cachePolicy: spec.cachePolicy ?? configuration.requestCachePolicy,
            timeoutInterval: spec.timeoutInterval ?? configuration.timeoutIntervalForRequest,
            networkServiceType: spec.networkServiceType ?? configuration.networkServiceType
        )
    }
}
