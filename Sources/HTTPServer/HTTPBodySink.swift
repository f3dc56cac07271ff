/// Where a streamed request body goes, chunk by chunk as it arrives, instead of into memory.
///
/// Created by `HTTPRequestHandler.bodySink(for:)` for one request and owned by the server until
/// that request ends. The server calls it from one thread at a time (the connection's pool
/// thread; at shutdown possibly the thread stopping the server), never concurrently, so a sink
/// need not be Sendable. Exactly one of `finish()` and `abandon()` is called, once; no `write`
/// follows either.
public protocol HTTPBodySink: AnyObject {
    /// The most body bytes this request may carry; it replaces the server's `maxBodySize`.
    /// A larger Content-Length is answered 413 before any byte is read; a chunked body that
    /// outgrows it is abandoned as soon as it does and answered 413 once the client has sent
    /// the rest (libmicrohttpd 0.9.75 can answer mid-body only by closing the connection).
    var maxBodySize: Int { get }

    /// Takes the next chunk of the body, in order. The bytes are valid only during the call.
    /// Returns false to stop: no further chunk is passed, the rest of the body is read and
    /// discarded, and `finish()` is then asked for the answer.
    func write(_ bytes: RawSpan) -> Bool

    /// The body has ended (or `write` returned false). Returns what the handler receives as
    /// `HTTPRequest.streamedBody`, or a refusal whose response is sent instead of calling the
    /// handler.
    func finish() -> Result<any Sendable, HTTPBodyRefusal>

    /// The request ends without `finish()`: refused from its head, body over `maxBodySize`,
    /// connection closed mid-body, or server stopping. Release what the sink holds (partial
    /// files). Must not block for long.
    func abandon()
}

/// A streamed body refused by its sink: the response to send instead of calling the handler.
public struct HTTPBodyRefusal: Error, Sendable {
    public var response: HTTPResponse

    public init(_ response: HTTPResponse) {
        self.response = response
    }
}
