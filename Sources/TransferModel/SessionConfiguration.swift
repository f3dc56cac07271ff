/// URLSessionConfiguration as JSON. Every property is optional on input and takes Apple's default;
/// the session stores its own copy (a session's configuration never changes after creation).
/// Applied in this version: the two timeouts, httpAdditionalHeaders,
/// httpMaximumConnectionsPerHost, the cookie settings, the proxies, the TLS settings, httpVersion,
/// requestCachePolicy and urlCache; the others are stored and reported for the issues that use them.
public struct SessionConfiguration: Codable, Sendable, Equatable {
    public var requestCachePolicy: CachePolicy = .useProtocolCachePolicy
    /// Idle timeout: the longest wait for the next byte, in seconds.
    public var timeoutIntervalForRequest: Double = 60
    /// The longest a whole transfer may take, in seconds (7 days).
    public var timeoutIntervalForResource: Double = 604_800
    public var networkServiceType: NetworkServiceType = .default
    public var allowsCellularAccess = true
    public var allowsExpensiveNetworkAccess = true
    public var allowsConstrainedNetworkAccess = true
    public var isDiscretionary = false
    public var sessionSendsLaunchEvents = true
    public var waitsForConnectivity = false
    /// The proxies (`ProxyDictionary`); nil: connect directly (proxy environment variables are
    /// never read).
    @NullEncoded public var connectionProxyDictionary: ProxyDictionary? = nil
    public var tlsMinimumSupportedProtocolVersion: TLSVersion = .TLSv12
    public var tlsMaximumSupportedProtocolVersion: TLSVersion = .TLSv13
    /// Not URLSession's: PEM certificates that replace the system's trust store for this
    /// session's servers (nil: the system's).
    @NullEncoded public var tlsCABundle: String? = nil
    /// Not URLSession's: "sha256//BASE64" SubjectPublicKeyInfo pins; a server must match one.
    public var tlsPinnedPublicKeys: [String] = []
    /// Not URLSession's: false turns off verification of the server's certificate for this
    /// session's TLS connections (https, FTPS, stream tasks), as curl's `-k`: any chain, any
    /// name, expired or self-signed is accepted (CURLOPT_SSL_VERIFYPEER and
    /// CURLOPT_SSL_VERIFYHOST 0). Dangerous: a man in the middle is no longer noticed. Pins
    /// (`tlsPinnedPublicKeys`) are still checked, and the network policy still applies.
    public var tlsVerifiesServerCertificate = true
    /// Not URLSession's: ftp:// URLs must upgrade to TLS with AUTH TLS (explicit FTPS, RFC 4217),
    /// control and data connections, with the TLS settings above; a server that refuses fails
    /// the task (secureConnectionFailed). false: plain FTP. ftps:// is always TLS (implicit).
    public var ftpRequiresTLS = false
    public var httpShouldUsePipelining = false
    public var httpShouldSetCookies = true
    public var httpCookieAcceptPolicy: CookieAcceptPolicy = .onlyFromMainDocumentDomain
    public var httpAdditionalHeaders: [String: String] = [:]
    public var httpMaximumConnectionsPerHost = 6
    /// Not URLSession's: the HTTP versions the session's requests may speak (`auto`: h2 by ALPN).
    public var httpVersion: HTTPVersionPreference = .auto
    /// Not URLSession's: the most tasks of this session running at once (nil: only the global
    /// and per-host caps apply).
    @NullEncoded public var maximumConcurrentTasks: Int? = nil
    /// Not URLSession's: the connections a download uses at once when its task does not say
    /// (`"segments"`, 1 to 16; 1: one connection, as URLSession).
    public var maximumSegmentsPerDownload = 1
    /// URLSessionConfiguration.urlCache: the cache's capacities, or nil for no cache. Left out,
    /// the session kind's default cache (`URLCacheConfiguration.automatic`, resolved at creation).
    @NullEncoded public var urlCache: URLCacheConfiguration? = .automatic
    /// Not URLSession's: the delegate callbacks the client decides live for this session's tasks
    /// that do not list their own (`DecisionKind`; each task keeps those that apply to its kind).
    public var decisions = DecisionSet()
    /// Not URLSession's: how long a decision waits for its answer before the default handling
    /// is taken, in seconds (nil: the request's timeoutInterval, as URLSession's callbacks are
    /// bounded by the request's own timeout).
    @NullEncoded public var decisionTimeoutInterval: Double? = nil

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case requestCachePolicy, timeoutIntervalForRequest, timeoutIntervalForResource, networkServiceType
        case allowsCellularAccess, allowsExpensiveNetworkAccess, allowsConstrainedNetworkAccess
        case isDiscretionary, sessionSendsLaunchEvents, waitsForConnectivity, connectionProxyDictionary
        case tlsMinimumSupportedProtocolVersion, tlsMaximumSupportedProtocolVersion, tlsCABundle, tlsPinnedPublicKeys, tlsVerifiesServerCertificate
        case ftpRequiresTLS
        case httpShouldUsePipelining, httpShouldSetCookies, httpCookieAcceptPolicy
        case httpAdditionalHeaders, httpMaximumConnectionsPerHost, httpVersion, maximumConcurrentTasks
        case urlCache, maximumSegmentsPerDownload, decisions, decisionTimeoutInterval
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
            try c.decodeOmittable(T.self, forKey: key) ?? fallback
        }
        let defaults = SessionConfiguration()
        requestCachePolicy = try value(.requestCachePolicy, defaults.requestCachePolicy)
        timeoutIntervalForRequest = try value(.timeoutIntervalForRequest, defaults.timeoutIntervalForRequest)
        timeoutIntervalForResource = try value(.timeoutIntervalForResource, defaults.timeoutIntervalForResource)
        networkServiceType = try value(.networkServiceType, defaults.networkServiceType)
        allowsCellularAccess = try value(.allowsCellularAccess, true)
        allowsExpensiveNetworkAccess = try value(.allowsExpensiveNetworkAccess, true)
        allowsConstrainedNetworkAccess = try value(.allowsConstrainedNetworkAccess, true)
        isDiscretionary = try value(.isDiscretionary, false)
        sessionSendsLaunchEvents = try value(.sessionSendsLaunchEvents, true)
        waitsForConnectivity = try value(.waitsForConnectivity, false)
        connectionProxyDictionary = try c.decodeIfPresent(ProxyDictionary.self, forKey: .connectionProxyDictionary)
        tlsMinimumSupportedProtocolVersion = try value(.tlsMinimumSupportedProtocolVersion, defaults.tlsMinimumSupportedProtocolVersion)
        tlsMaximumSupportedProtocolVersion = try value(.tlsMaximumSupportedProtocolVersion, defaults.tlsMaximumSupportedProtocolVersion)
        tlsCABundle = try c.decodeIfPresent(String.self, forKey: .tlsCABundle)
        tlsPinnedPublicKeys = try value(.tlsPinnedPublicKeys, [])
        tlsVerifiesServerCertificate = try value(.tlsVerifiesServerCertificate, true)
        ftpRequiresTLS = try value(.ftpRequiresTLS, false)
        httpShouldUsePipelining = try value(.httpShouldUsePipelining, false)
        httpShouldSetCookies = try value(.httpShouldSetCookies, true)
        httpCookieAcceptPolicy = try value(.httpCookieAcceptPolicy, defaults.httpCookieAcceptPolicy)
        httpAdditionalHeaders = try value(.httpAdditionalHeaders, [:])
        httpMaximumConnectionsPerHost = try Self.integer(c, .httpMaximumConnectionsPerHost) ?? 6
        httpVersion = try value(.httpVersion, defaults.httpVersion)
        maximumConcurrentTasks = try Self.integer(c, .maximumConcurrentTasks, nullable: true)
        maximumSegmentsPerDownload = try Self.integer(c, .maximumSegmentsPerDownload) ?? 1
        // Absent: the kind's default cache; null: none.
        urlCache = c.contains(.urlCache) ? try c.decode(URLCacheConfiguration?.self, forKey: .urlCache) : .automatic
        if let names = try c.decodeOmittable([String].self, forKey: .decisions) {
            decisions = DecisionSet(try DecisionKind.decodeList(names, field: decoder.path(CodingKeys.decisions)))
        }
        decisionTimeoutInterval = try c.decodeIfPresent(Double.self, forKey: .decisionTimeoutInterval)
        if let decisionTimeoutInterval { try Validate.interval(decisionTimeoutInterval, decoder.path(CodingKeys.decisionTimeoutInterval)) }

        try Validate.interval(timeoutIntervalForRequest, decoder.path(CodingKeys.timeoutIntervalForRequest))
        try Validate.interval(timeoutIntervalForResource, decoder.path(CodingKeys.timeoutIntervalForResource))
        guard (1...64).contains(httpMaximumConnectionsPerHost) else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.httpMaximumConnectionsPerHost), message: "must be between 1 and 64")
        }
        if let cap = maximumConcurrentTasks, !(1...10_000).contains(cap) {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.maximumConcurrentTasks), message: "must be between 1 and 10000, or null")
        }
        try DownloadSegments.check(segments: maximumSegmentsPerDownload, field: decoder.path(CodingKeys.maximumSegmentsPerDownload))
        if tlsMinimumSupportedProtocolVersion.rawValue > tlsMaximumSupportedProtocolVersion.rawValue {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.tlsMinimumSupportedProtocolVersion), message: "must not be above tlsMaximumSupportedProtocolVersion")
        }
        if let tlsCABundle { try TLSTrustInput.checkCABundle(tlsCABundle, field: decoder.path(CodingKeys.tlsCABundle)) }
        try TLSTrustInput.checkPins(tlsPinnedPublicKeys, field: decoder.path(CodingKeys.tlsPinnedPublicKeys))
        // tlsVerifiesServerCertificate false with pins is allowed, and means "this key, whatever
        // its certificate says": libcurl checks CURLOPT_PINNEDPUBLICKEY whether or not
        // CURLOPT_SSL_VERIFYPEER is on (its documentation: "This option is independent of
        // option CURLOPT_SSL_VERIFYPEER. If you turn off that option then the peer is still
        // verified by public key"; so since 7.41, curl bug #1471, and our 7.88.1 does, as
        // TLSVerificationOffTests shows: a wrong pin still fails the task). A pin is thus never
        // a promise that goes unchecked. tlsCABundle with it is allowed too: it has no effect.
        for name in httpAdditionalHeaders.keys.sorted() {
            try Validate.header(name: name, value: httpAdditionalHeaders[name] ?? "", decoder.path(CodingKeys.httpAdditionalHeaders))
        }
    }

    /// An integer field, decoded as a number first: JSONDecoder reports 2.5 for an Int as "not
    /// valid JSON" with no field, which would answer malformed_json.
    private static func integer(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, nullable: Bool = false) throws -> Int? {
        let found = nullable ? try c.decodeIfPresent(Double.self, forKey: key) : try c.decodeOmittable(Double.self, forKey: key)
        guard let number = found else { return nil }
        guard number.rounded() == number, abs(number) < 1e9 else {
            throw DecodingError.typeMismatch(Int.self, .init(codingPath: c.codingPath + [key], debugDescription: "must be an integer"))
        }
        return Int(number)
    }
}
