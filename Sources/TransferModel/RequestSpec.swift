internal import FoundationEssentials

/// A URLRequest as a client posts it (`request` of a new task).
public struct RequestSpec: Decodable, Sendable {
    public var url: String
    public var method: String
    public var headers: [String: String]
    public var body: RequestBody?
    public var cachePolicy: CachePolicy?
    public var timeoutInterval: Double?
    public var networkServiceType: NetworkServiceType?
    /// URLRequest.httpShouldHandleCookies: false sends no jar cookies and stores none.
    public var httpShouldHandleCookies = true
    /// URLRequest.mainDocumentURL: the site cookies must belong to under the
    /// onlyFromMainDocumentDomain policy (nil: the request's own URL).
    public var mainDocumentURL: String?

    public init(url: String, method: String = "GET", headers: [String: String] = [:], body: RequestBody? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, method, headers, body, cachePolicy, timeoutInterval, networkServiceType
        case allowsCellularAccess, httpShouldHandleCookies, mainDocumentURL
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.decode(String.self, forKey: .url)
        method = try c.decodeOmittable(String.self, forKey: .method) ?? "GET"
        headers = try c.decodeOmittable([String: String].self, forKey: .headers) ?? [:]
        body = try c.decodeOmittable(RequestBody.self, forKey: .body)
        cachePolicy = try c.decodeOmittable(CachePolicy.self, forKey: .cachePolicy)
        timeoutInterval = try c.decodeOmittable(Double.self, forKey: .timeoutInterval)
        networkServiceType = try c.decodeOmittable(NetworkServiceType.self, forKey: .networkServiceType)
        // Mobile-only: accepted (URLRequest has it), no effect on a server.
        _ = try c.decodeOmittable(Bool.self, forKey: .allowsCellularAccess)
        httpShouldHandleCookies = try c.decodeOmittable(Bool.self, forKey: .httpShouldHandleCookies) ?? true
        mainDocumentURL = try c.decodeOmittable(String.self, forKey: .mainDocumentURL)

        guard Validate.isToken(method) else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.method), message: "\"\(method)\" is not a valid HTTP method")
        }
        for name in headers.keys.sorted() {
            try Validate.header(name: name, value: headers[name] ?? "", decoder.path(CodingKeys.headers))
        }
        if let timeoutInterval { try Validate.interval(timeoutInterval, decoder.path(CodingKeys.timeoutInterval)) }
        try RequestURL.check(url, field: decoder.path(CodingKeys.url))
        if let mainDocumentURL { try RequestURL.check(mainDocumentURL, field: decoder.path(CodingKeys.mainDocumentURL)) }
    }
}

/// Checks of a request URL. A malformed URL is refused at creation (422 invalid_url); a
/// well-formed URL of a scheme not served creates a task that fails with unsupportedURL, as
/// URLSession does. data: and file: URLs are checked when their task runs (a malformed data:
/// URL fails the task with badURL, as URLSession does; file: needs `--file-url-roots`).
public enum RequestURL {
    /// The schemes that must name a host (ftp, ftps and sftp: `RemoteFileScheme`).
    public static let networkSchemes: Set<String> = ["http", "https", "ftp", "ftps", "sftp"]
    /// Every scheme a task can run: the network ones through libcurl, the local ones
    /// (`LocalScheme`) answered by the daemon.
    public static let supportedSchemes: Set<String> = networkSchemes.union(["data", "file"])

    /// Thrown for a URL that cannot be a request URL at all.
    public struct Malformed: Error, Sendable, Equatable {
        public let field: String
        public let message: String
    }

    /// The longest URL a request may have, in bytes (a data: URL may be longer).
    static let maxLength = 8192
    /// The longest data: URL, in bytes: it carries its body (about 768 KiB once base64 is
    /// decoded), and the task's JSON repeats it in originalRequest, currentRequest and response.
    static let maxDataURLLength = 1 << 20

    package static func check(_ text: String, field: String) throws {
        if PlainHTTPURL.isPlain(text) { return }  // what Foundation's parse would accept, sooner
        let limit = LocalScheme(url: text) == .data ? maxDataURLLength : maxLength
        guard text.utf8.count <= limit else { throw Malformed(field: field, message: "is longer than \(limit) bytes") }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }),
              let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty else {
            throw Malformed(field: field, message: "\"\(text.prefix(200))\" is not an absolute URL")
        }
        if networkSchemes.contains(scheme.lowercased()), (url.host ?? "").isEmpty {
            throw Malformed(field: field, message: "\"\(text.prefix(200))\" has no host")
        }
    }

    /// Whether the engine can run this URL.
    package static func isSupported(_ text: String) -> Bool {
        if PlainHTTPURL.isPlain(text) { return true }
        guard let scheme = URL(string: text)?.scheme?.lowercased() else { return false }
        return supportedSchemes.contains(scheme)
    }
}
