import FoundationEssentials

/// How an `HTTPServer` listens and what limits it enforces.
///
/// A value owned by the caller; the server keeps its own copy from `init`.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind, as an IPv4 or IPv6 literal ("127.0.0.1", "::1", "0.0.0.0", "::").
    public var host: String = "127.0.0.1"
    /// The TCP port; 0 binds any free port (read it back from `HTTPServer.port`).
    public var port: Int = 8080
    /// Size of libmicrohttpd's thread pool (each thread runs its own epoll loop).
    public var threadCount: Int = 4
    /// The largest request body accepted, in bytes; larger ones are answered 413.
    public var maxBodySize: Int = 16 << 20
    /// The most connections open at once, suspended ones included.
    public var connectionLimit: Int = 10_000
    /// The most connections one client address may hold at once (0: no cap). A client past it
    /// has its new connections closed at once, so one address cannot take every slot.
    public var perClientConnectionLimit: Int = 0
    /// Seconds of inactivity after which a connection that is NOT suspended is closed (a held
    /// long-poll is suspended: its own wait bounds it).
    public var idleConnectionTimeout: Int = 120
    /// Builds the body of errors the server itself produces (413 when the body exceeds
    /// maxBodySize, 503 for requests still suspended at stop). Given status, code, message.
    public var errorResponse: @Sendable (Int, String, String) -> HTTPResponse

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        threadCount: Int = 4,
        maxBodySize: Int = 16 << 20,
        connectionLimit: Int = 10_000,
        perClientConnectionLimit: Int = 0,
        idleConnectionTimeout: Int = 120,
        errorResponse: @escaping @Sendable (Int, String, String) -> HTTPResponse
            = HTTPServerConfiguration.jsonErrorResponse
    ) {
        self.host = host
        self.port = port
        self.threadCount = threadCount
        self.maxBodySize = maxBodySize
        self.connectionLimit = connectionLimit
        self.perClientConnectionLimit = perClientConnectionLimit
        self.idleConnectionTimeout = idleConnectionTimeout
        self.errorResponse = errorResponse
    }

    /// The default error body: `{"error":{"code":"...","message":"..."}}` as application/json.
    public static func jsonErrorResponse(status: Int, code: String, message: String) -> HTTPResponse {
        let json = #"{"error":{"code":"# + jsonString(code) + #","message":"# + jsonString(message) + "}}"
        return HTTPResponse(
            status: status,
            headers: ["Content-Type": "application/json"],
            body: Data(json.utf8)
        )
    }

    /// A JSON string literal for `text` (RFC 8259 §7 escapes).
    private static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
