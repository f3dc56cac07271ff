public import FoundationEssentials

/// A whole request: its head and its body, read completely (at most `maxBodySize` bytes).
///
/// A value owned by whoever holds it; the server builds it once the body is complete and
/// passes it to `HTTPRequestHandler.handle`. Handlers can be tested by building one directly.
public struct HTTPRequest: Sendable {
    public let head: HTTPRequestHead
    public let body: Data

    public init(head: HTTPRequestHead, body: Data = Data()) {
        self.head = head
        self.body = body
    }

    public var method: String { head.method }
    public var path: String { head.path }
    public var query: [String: String] { head.query }
    public var headers: HTTPHeaders { head.headers }
}
