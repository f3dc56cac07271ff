package import FoundationEssentials

/// One request and its response within a task (URLSessionTaskTransactionMetrics, same names):
/// each hop of a redirect chain is one. Measured by the engine from libcurl's phase times;
/// a phase that did not happen (DNS and connect on a reused connection, TLS over http) is null.
public struct TransactionMetrics: Codable, Sendable, Equatable {
    /// The request this transaction sent: its URL and method.
    public struct Request: Codable, Sendable, Equatable {
        public var url: String
        public var method: String

        /// The memberwise initializer, for the layers above.
        package init(url: String, method: String) {
            self.url = url
            self.method = method
        }
    }

    /// The response's status (null when none came).
    public struct Response: Codable, Sendable, Equatable {
        public var statusCode: Int

        /// The memberwise initializer, for the layers above.
        package init(statusCode: Int) {
            self.statusCode = statusCode
        }
    }

    public var request: Request
    @NullEncoded public var response: Response?
    public var fetchStartDate: MetricsDate
    @NullEncoded public var domainLookupStartDate: MetricsDate?
    @NullEncoded public var domainLookupEndDate: MetricsDate?
    @NullEncoded public var connectStartDate: MetricsDate?
    @NullEncoded public var connectEndDate: MetricsDate?
    @NullEncoded public var secureConnectionStartDate: MetricsDate?
    @NullEncoded public var secureConnectionEndDate: MetricsDate?
    @NullEncoded public var requestStartDate: MetricsDate?
    @NullEncoded public var requestEndDate: MetricsDate?
    @NullEncoded public var responseStartDate: MetricsDate?
    @NullEncoded public var responseEndDate: MetricsDate?
    /// ALPN's names: "http/1.0", "http/1.1", "h2", "h3"; null when no response came.
    @NullEncoded public var networkProtocolName: String?
    /// The TLS version the connection negotiated (URLSession's tls_protocol_version_t, named as
    /// the session's tlsMinimumSupportedProtocolVersion is); null without TLS.
    @NullEncoded public var negotiatedTLSProtocolVersion: TLSVersion? = nil
    /// The negotiated cipher suite's IANA number (URLSession's tls_ciphersuite_t, e.g. 4865 for
    /// TLS_AES_128_GCM_SHA256); null without TLS.
    @NullEncoded public var negotiatedTLSCipherSuite: Int? = nil
    public var isProxyConnection: Bool
    public var isReusedConnection: Bool
    /// "networkLoad" (from the network) or "localCache" (answered by the URL cache).
    public var resourceFetchType: String
    @NullEncoded public var remoteAddress: String?
    @NullEncoded public var remotePort: Int?
    @NullEncoded public var localAddress: String?
    @NullEncoded public var localPort: Int?
    public var countOfRequestHeaderBytesSent: Int
    public var countOfRequestBodyBytesSent: Int
    public var countOfResponseHeaderBytesReceived: Int
    public var countOfResponseBodyBytesReceived: Int

    /// resourceFetchType of a response that came over the network.
    package static let networkLoad = "networkLoad"
    /// resourceFetchType of a response the URL cache answered.
    static let localCache = "localCache"

    /// A response the URL cache delivered (URLSession's localCache transaction): it began at
    /// `fetchStart` (the cache's decision) and ended at `end` (the stored body read). No
    /// network phase happened, so those dates, the protocol, the addresses and the byte counts,
    /// which count network traffic, are null or 0.
    package static func fromCache(url: String, method: String, statusCode: Int, fetchStart: Date, end: Date) -> TransactionMetrics {
        let start = MetricsDate(fetchStart)
        let done = max(start, MetricsDate(end))
        return TransactionMetrics(
            request: .init(url: url, method: method), response: .init(statusCode: statusCode),
            fetchStartDate: start, domainLookupStartDate: nil, domainLookupEndDate: nil,
            connectStartDate: nil, connectEndDate: nil, secureConnectionStartDate: nil, secureConnectionEndDate: nil,
            requestStartDate: start, requestEndDate: start, responseStartDate: done, responseEndDate: done,
            networkProtocolName: nil, isProxyConnection: false, isReusedConnection: false, resourceFetchType: localCache,
            remoteAddress: nil, remotePort: nil, localAddress: nil, localPort: nil,
            countOfRequestHeaderBytesSent: 0, countOfRequestBodyBytesSent: 0,
            countOfResponseHeaderBytesReceived: 0, countOfResponseBodyBytesReceived: 0)
    }

    /// The memberwise initializer, for the layers above.
    package init(
        request: Request,
        response: Response? = nil,
        fetchStartDate: MetricsDate,
        domainLookupStartDate: MetricsDate? = nil,
        domainLookupEndDate: MetricsDate? = nil,
        connectStartDate: MetricsDate? = nil,
        connectEndDate: MetricsDate? = nil,
        secureConnectionStartDate: MetricsDate? = nil,
        secureConnectionEndDate: MetricsDate? = nil,
        requestStartDate: MetricsDate? = nil,
        requestEndDate: MetricsDate? = nil,
        responseStartDate: MetricsDate? = nil,
        responseEndDate: MetricsDate? = nil,
        networkProtocolName: String? = nil,
        negotiatedTLSProtocolVersion: TLSVersion? = nil,
        negotiatedTLSCipherSuite: Int? = nil,
        isProxyConnection: Bool,
        isReusedConnection: Bool,
        resourceFetchType: String,
        remoteAddress: String? = nil,
        remotePort: Int? = nil,
        localAddress: String? = nil,
        localPort: Int? = nil,
        countOfRequestHeaderBytesSent: Int,
        countOfRequestBodyBytesSent: Int,
        countOfResponseHeaderBytesReceived: Int,
        countOfResponseBodyBytesReceived: Int
    ) {
        self.request = request
        self.response = response
        self.fetchStartDate = fetchStartDate
        self.domainLookupStartDate = domainLookupStartDate
        self.domainLookupEndDate = domainLookupEndDate
        self.connectStartDate = connectStartDate
        self.connectEndDate = connectEndDate
        self.secureConnectionStartDate = secureConnectionStartDate
        self.secureConnectionEndDate = secureConnectionEndDate
        self.requestStartDate = requestStartDate
        self.requestEndDate = requestEndDate
        self.responseStartDate = responseStartDate
        self.responseEndDate = responseEndDate
        self.networkProtocolName = networkProtocolName
        self.negotiatedTLSProtocolVersion = negotiatedTLSProtocolVersion
        self.negotiatedTLSCipherSuite = negotiatedTLSCipherSuite
        self.isProxyConnection = isProxyConnection
        self.isReusedConnection = isReusedConnection
        self.resourceFetchType = resourceFetchType
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.localAddress = localAddress
        self.localPort = localPort
        self.countOfRequestHeaderBytesSent = countOfRequestHeaderBytesSent
        self.countOfRequestBodyBytesSent = countOfRequestBodyBytesSent
        self.countOfResponseHeaderBytesReceived = countOfResponseHeaderBytesReceived
        self.countOfResponseBodyBytesReceived = countOfResponseBodyBytesReceived
    }
}
