import FoundationEssentials

/// One request's progress through the access handler: its head, the body read so far and
/// how it will be answered.
///
/// Owned by libmicrohttpd through the access handler's `con_cls` slot: retained with
/// `Unmanaged.passRetained` on the request's first call and released in the
/// request-completed callback. Not Sendable: only the connection's pool thread touches it
/// (libmicrohttpd calls back for one connection on one thread at a time).
final class RequestContext {
    let head: HTTPRequestHead
    /// The body received so far; handed over (and dropped here) when handle() is called.
    var body = Data()
    /// An answer decided from the head alone, given on the final call so that a request
    /// without a body keeps its connection alive.
    var earlyResponse: HTTPResponse?
    /// The body outgrew its limit: the rest is discarded and 413 answered at the end.
    var bodyTooLarge = false
    /// Where the body goes instead of `body`, until it is finished or abandoned (then nil).
    var sink: (any HTTPBodySink)?
    /// The sink returned false: the rest of the body is discarded, finish() gives the answer.
    var sinkStopped = false
    /// Body bytes received so far (kept, streamed or discarded).
    var received = 0
    /// The most body bytes accepted: the sink's maxBodySize, else the server's.
    var bodyLimit = 0
    /// Set once handle() was called; the access handler's later calls go through it.
    var responder: Responder?

    init(head: HTTPRequestHead) {
        self.head = head
    }
}
