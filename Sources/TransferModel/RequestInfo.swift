internal import FoundationEssentials

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
    /// Whether this request sends and stores cookies (URLRequest.httpShouldHandleCookies).
    public var httpShouldHandleCookies = true
    /// URLRequest.mainDocumentURL (nil: the request's own URL is the main document).
    @NullEncoded public var mainDocumentURL: String? = nil

    enum CodingKeys: String, CodingKey {
        case url, method, headers, bodyLength, cachePolicy, timeoutInterval, networkServiceType
        case httpShouldHandleCookies, mainDocumentURL
    }
}

extension RequestInfo {
    /// Rows stored before the cookie fields existed decode with their defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.decode(String.self, forKey: .url)
        method = try c.decode(String.self, forKey: .method)
        headers = try c.decode([String: String].self, forKey: .headers)
        bodyLength = try c.decodeIfPresent(Int.self, forKey: .bodyLength)
        cachePolicy = try c.decode(CachePolicy.self, forKey: .cachePolicy)
        timeoutInterval = try c.decode(Double.self, forKey: .timeoutInterval)
        networkServiceType = try c.decode(NetworkServiceType.self, forKey: .networkServiceType)
        httpShouldHandleCookies = try c.decodeIfPresent(Bool.self, forKey: .httpShouldHandleCookies) ?? true
        mainDocumentURL = try c.decodeIfPresent(String.self, forKey: .mainDocumentURL)
    }
}

extension RequestInfo {
    /// Builds the request a task sends from what the client posted and its session's configuration.
    package init(spec: RequestSpec, bodyLength: Int?, configuration: SessionConfiguration) {
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
            networkServiceType: spec.networkServiceType ?? configuration.networkServiceType,
            httpShouldHandleCookies: spec.httpShouldHandleCookies,
            mainDocumentURL: spec.mainDocumentURL
        )
    }
}
