public import FoundationEssentials

/// A whole request: its head and its body, read completely (at most `maxBodySize` bytes), or,
/// when the handler streamed the body to an `HTTPBodySink`, an empty `body` and what the sink
/// produced.
///
/// A value owned by whoever holds it; the server builds it once the body is complete and
/// passes it to `HTTPRequestHandler.handle`. Handlers can be tested by building one directly.
public struct HTTPRequest: Sendable {
    public let head: HTTPRequestHead
    public let body: Data
    /// What the request's `HTTPBodySink.finish()` returned; nil when the body was not streamed.
    public let streamedBody: (any Sendable)?

    public init(head: HTTPRequestHead, body: Data = Data(), streamedBody: (any Sendable)? = nil) {
        self.head = head
        self.body = body
        self.streamedBody = streamedBody
    }

    public var method: String { head.method }
    public var path: String { head.path }
    public var query: [String: String] { head.query }
    public var headers: HTTPHeaders { head.headers }
}
