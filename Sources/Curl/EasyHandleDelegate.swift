/// What a transfer hears from its easy handle. Called on the thread that drives the multi handle,
/// from inside `curl_multi_perform`: implementations must not block, throw, or touch the handle's
/// multi (curl_easy_pause is allowed).
public protocol EasyHandleDelegate: AnyObject {
    /// One header line as received, without the trailing CRLF ("HTTP/1.1 200 OK", "Name: value",
    /// or "" at the end of a header block). Every response of a redirect chain passes through.
    /// Return false to fail the transfer (CURLE_WRITE_ERROR) before curl reads further.
    func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: String) -> Bool
    /// A chunk of the (decoded) body.
    func easyHandle(_ handle: EasyHandle, didReceive bytes: RawSpan) -> WriteDisposition
    /// Transfer counters; return false to abort the transfer (CURLE_ABORTED_BY_CALLBACK).
    func easyHandle(_ handle: EasyHandle, progress: TransferCounters) -> Bool
    /// Fills `buffer` with the next bytes of a streamed request body (`EasyOption.upload`).
    func easyHandle(_ handle: EasyHandle, fill buffer: inout MutableRawSpan) -> ReadDisposition
    /// The streamed body must be read again from `offset`; false if it cannot (the transfer then
    /// fails with CURLE_SEND_FAIL_REWIND).
    func easyHandle(_ handle: EasyHandle, rewindBodyTo offset: Int) -> Bool
}

extension EasyHandleDelegate {
    /// Transfers without a streamed body are never asked.
    public func easyHandle(_ handle: EasyHandle, fill buffer: inout MutableRawSpan) -> ReadDisposition { .abort }
    public func easyHandle(_ handle: EasyHandle, rewindBodyTo offset: Int) -> Bool { false }
}

/// What the read callback tells libcurl.
public enum ReadDisposition: Sendable {
    /// This many bytes were put in the buffer; 0 means the body is complete.
    case filled(Int)
    /// Fail the transfer (CURLE_ABORTED_BY_CALLBACK).
    case abort
    /// No bytes yet: pause sending (CURL_READFUNC_PAUSE) until the handle is unpaused, when the
    /// callback is asked again.
    case pause
}

/// What the write callback tells libcurl about a chunk.
public enum WriteDisposition: Sendable {
    case accept
    /// Pause the transfer (CURL_WRITEFUNC_PAUSE); the chunk is delivered again on unpause.
    case pause
    /// Fail the transfer with CURLE_WRITE_ERROR.
    case fail
}

/// libcurl's xferinfo counters. Totals are 0 while unknown.
public struct TransferCounters: Sendable, Equatable {
    public var downloadTotal: Int
    public var downloaded: Int
    public var uploadTotal: Int
    public var uploaded: Int
}
