/// What a client sent before the body: method, target and header fields.
///
/// Built by the server from libmicrohttpd's parsed request on the connection's thread and
/// handed, as a value, to the handler's `preflight` and (inside `HTTPRequest`) `handle`.
public struct HTTPRequestHead: Sendable {
    /// Unique per request within the process, increasing in arrival order.
    public let id: UInt64
    /// The method as sent, e.g. "GET".
    public let method: String
    /// The percent-decoded path without the query, e.g. "/v1/tasks/7".
    public let path: String
    /// The decoded query arguments; when a name repeats, the last value wins.
    public let query: [String: String]
    public let headers: HTTPHeaders
    /// The peer as "address:port" ("127.0.0.1:53422", "[::1]:53422"), nil when unknown.
    public let remoteAddress: String?

    public init(
        id: UInt64,
        method: String,
        path: String,
        query: [String: String] = [:],
        headers: HTTPHeaders = HTTPHeaders(),
        remoteAddress: String? = nil
    ) {
        self.id = id
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.remoteAddress = remoteAddress
    }
}
