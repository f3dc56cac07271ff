public import FoundationEssentials

/// What to answer: status, header fields and a body from memory, a file or a stream.
///
/// A value built by a handler (or by the server for its own errors) and consumed by the
/// server when it is queued on the connection. `Content-Length` is always computed by the
/// server; a `Content-Length` field set here is ignored.
public struct HTTPResponse: Sendable {
    /// Where the body comes from.
    public enum Body: Sendable {
        /// Bytes in memory, copied once into libmicrohttpd's buffer.
        case data(Data)
        /// `length` bytes of the file at `path` from `offset`, sent with sendfile(2). If the
        /// file cannot be opened the client gets the configured 404 error instead.
        case file(path: String, offset: Int, length: Int)
        /// A body produced while it is sent: chunked when `length` is nil, else exactly `length` bytes (Content-Length).
        case stream(any HTTPBodyStream, length: Int?)
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = .data(body)
    }

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Body) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
