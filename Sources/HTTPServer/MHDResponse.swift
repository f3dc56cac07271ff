internal import CMicroHTTPD
internal import Glibc
import FoundationEssentials

/// Turns an `HTTPResponse` into a libmicrohttpd response and queues it on a connection.
/// Connection thread only (inside the access handler); owns the MHD_Response it creates
/// until MHD_queue_response has taken its own reference. A stream body gets its
/// `StreamedBody` here, where the connection it will suspend is known.
enum MHDResponse {
    /// Queues `response` on `connection` (the answer to a `method` request: HEAD gets no
    /// body). A file that cannot be opened is answered with the configured 404; a response
    /// libmicrohttpd cannot build (out of memory, a status outside 100...999) closes the
    /// connection (MHD_NO).
    static func queue(
        _ response: HTTPResponse, on connection: OpaquePointer, method: String, core: ServerCore, isFallback: Bool = false
    ) -> MHD_Result {
        let body: OpaquePointer
        switch makeBody(response, bodyless: method == "HEAD" || response.status == 304, connection: connection, core: core) {
        case .made(let made):
            body = made
        case .fileMissing:
            guard !isFallback else { return .NO }
            let notFound = core.errorResponse(404, "not_found", "The requested file is not available.")
            return queue(notFound, on: connection, method: method, core: core, isFallback: true)
        case .failed:
            return .NO
        }
        // Also when MHD_queue_response fails: a stream body is then closed by its free callback.
        defer { MHD_destroy_response(body) }
        for (name, value) in response.headers where !HTTPHeaders.sameName(name, "Content-Length") {
            // MHD_NO means a value it refuses (e.g. a Transfer-Encoding other than chunked);
            // that header is dropped rather than failing the whole answer.
            _ = MHD_add_response_header(body, name, value)
        }
        guard (100...999).contains(response.status) else { return .NO }
        return MHD_queue_response(connection, UInt32(response.status), body)
    }

    private enum Made {
        case made(OpaquePointer)
        /// The file cannot be opened (or its range is negative): answered 404.
        case fileMissing
        /// libmicrohttpd could not build it (out of memory, a negative stream length).
        case failed
    }

    /// Creates the MHD_Response for a body; `bodyless`: libmicrohttpd will send the head only.
    private static func makeBody(_ response: HTTPResponse, bodyless: Bool, connection: OpaquePointer, core: ServerCore) -> Made {
        switch response.body {
        case .data(let data):
            // MUST_COPY: one copy into libmicrohttpd's own buffer, so the Data's storage
            // need not outlive this call.
            let response = data.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(
                    bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY
                )
            }
            return response.map(Made.made) ?? .failed
        case let .file(path, offset, length):
            guard offset >= 0, length >= 0 else { return .fileMissing }
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return .fileMissing }
            // The response owns fd from here: MHD closes it when the response is destroyed.
            guard let response = MHD_create_response_from_fd_at_offset64(UInt64(length), fd, UInt64(offset)) else {
                close(fd)
                return .fileMissing
            }
            return .made(response)
        case let .stream(stream, length):
            guard let made = StreamedBody.makeResponse(stream, length: length, connection: connection, core: core) else {
                return .failed
            }
            if bodyless && length == nil {
                // 0.9.75 sends a chunked answer's last chunk ("0\r\n\r\n") even to HEAD and
                // 304, which the client reads as the next response. Without chunked encoding
                // and without a length the head is sent alone and the connection closes.
                _ = mhd_set_response_flags(made, .RF_HTTP_1_0_COMPATIBLE_STRICT)
            }
            return .made(made)
        }
    }
}
