internal import CMicroHTTPD
internal import Glibc
import FoundationEssentials

/// Turns an `HTTPResponse` into a libmicrohttpd response and queues it on a connection.
/// Connection thread only (inside the access handler); owns the MHD_Response it creates
/// until MHD_queue_response has taken its own reference.
enum MHDResponse {
    /// Queues `response` on `connection`. A file that cannot be opened is answered with the
    /// configured 404; a response libmicrohttpd cannot build (out of memory, a status
    /// outside 100...999) closes the connection (MHD_NO).
    static func queue(
        _ response: HTTPResponse, on connection: OpaquePointer, core: ServerCore, isFallback: Bool = false
    ) -> MHD_Result {
        guard let body = makeBody(response.body) else {
            guard !isFallback else { return .NO }
            let notFound = core.errorResponse(404, "not_found", "The requested file is not available.")
            return queue(notFound, on: connection, core: core, isFallback: true)
        }
        defer { MHD_destroy_response(body) }
        for (name, value) in response.headers where !HTTPHeaders.sameName(name, "Content-Length") {
            // MHD_NO means a value it refuses (e.g. a Transfer-Encoding other than chunked);
            // that header is dropped rather than failing the whole answer.
            _ = MHD_add_response_header(body, name, value)
        }
        guard (100...999).contains(response.status) else { return .NO }
        return MHD_queue_response(connection, UInt32(response.status), body)
    }

    /// Creates the MHD_Response for a body; nil only when a file cannot be opened.
    private static func makeBody(_ body: HTTPResponse.Body) -> OpaquePointer? {
        switch body {
        case .data(let data):
            // MUST_COPY: one copy into libmicrohttpd's own buffer, so the Data's storage
            // need not outlive this call.
            return data.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(
                    bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY
                )
            }
        case let .file(path, offset, length):
            guard offset >= 0, length >= 0 else { return nil }
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            // The response owns fd from here: MHD closes it when the response is destroyed.
            guard let response = MHD_create_response_from_fd_at_offset64(UInt64(length), fd, UInt64(offset)) else {
                close(fd)
                return nil
            }
            return response
        }
    }
}
