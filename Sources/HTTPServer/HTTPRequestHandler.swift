/// The application's side of the server: decides early refusals and answers requests.
///
/// Owned by the application and shared (read-only) by every server thread, hence `Sendable`.
/// Neither method may block for long: both run on one of libmicrohttpd's few pool threads.
/// Work that waits (long-polls, slow I/O) keeps the `Responder` and answers later.
public protocol HTTPRequestHandler: Sendable {
    /// Called once the head is known, before any body is read: return a response to refuse
    /// the request early (401, 413, 415 ...), nil to go on and read the body.
    ///
    /// A refusal of a request that has a body closes the connection after the answer (the
    /// unread body cannot be skipped safely); one without a body keeps the connection alive.
    func preflight(_ head: HTTPRequestHead) -> HTTPResponse?

    /// Called once the head is known, before `preflight` and before any size check: return a
    /// sink to stream this request's body into (its `maxBodySize` then replaces the server's;
    /// `handle` gets an empty `body` and the sink's product as `streamedBody`), or nil to read
    /// the body into memory. The server calls `abandon()` on a sink it does not finish, so
    /// one returned for a request that `preflight` then refuses is released.
    func bodySink(for head: HTTPRequestHead) -> (any HTTPBodySink)?

    /// Called with the whole request. May call responder.respond before returning (normal case)
    /// or keep the responder and call it later from any thread (long-poll): the connection is
    /// then suspended (MHD_suspend_connection) and holds no thread until respond() resumes it.
    func handle(_ request: HTTPRequest, responder: Responder)
}

extension HTTPRequestHandler {
    /// By default nothing is refused early.
    public func preflight(_ head: HTTPRequestHead) -> HTTPResponse? { nil }

    /// By default every body is read into memory (at most `maxBodySize` bytes).
    public func bodySink(for head: HTTPRequestHead) -> (any HTTPBodySink)? { nil }
}
