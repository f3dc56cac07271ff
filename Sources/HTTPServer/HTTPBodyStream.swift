/// What one read of a streamed body gave.
public enum HTTPBodyStreamRead: Sendable {
    /// `count` bytes were copied into the buffer (count > 0).
    case bytes(Int)
    /// None are there yet: the stream calls the `wake` it was given once some are (or it ended).
    case wait
    /// The body is complete.
    case end
    /// The body cannot be completed (the transfer failed): the client must see an error (a chunked answer cut without its last chunk, or a Content-Length answer closed early).
    case failed
}

/// A body produced while it is sent. Its methods are called on the connection's thread, one at a time; `wake` may be called from any thread.
///
/// Given in `HTTPResponse.Body.stream` to `Responder.respond`; from then on the server calls
/// `close()` exactly once, also when `read` was never called (HEAD, a 204 or 304, an answer
/// ignored or never sent). `read` runs on a libmicrohttpd pool thread, so it must not block.
/// `close()` runs on a pool thread too (also when `HTTPServer.stop()` ends the answer), or, for
/// an ignored second answer, on the thread that called `respond`.
public protocol HTTPBodyStream: AnyObject, Sendable {
    /// Copies up to `buffer.count` next bytes; on `.wait` it keeps `wake` and calls it once (any thread) when there is something to read or the end came. A wake that comes after `close()` must be harmless.
    func read(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) -> HTTPBodyStreamRead
    /// The answer is over (sent, the client went away, or the server stops): forget the wake and let go.
    func close()
}
