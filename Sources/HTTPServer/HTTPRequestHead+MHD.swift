internal import CMicroHTTPD

/// Collects (key, value) pairs from MHD_get_connection_values into the array `cls` points
/// to. A file-scope C callback: it only appends, never throws or blocks.
private let appendPair: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let pairs = cls.assumingMemoryBound(to: [(String, String)].self)
    pairs.pointee.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return .YES
}

extension HTTPRequestHead {
    /// Reads the head of the request libmicrohttpd has just parsed on `connection`.
    /// Connection thread only (inside the access handler).
    ///
    /// `url` is already percent-decoded and stripped of its query by libmicrohttpd; the
    /// query arguments come decoded from MHD_GET_ARGUMENT_KIND, in the order sent.
    init(id: UInt64, connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?) {
        let headers = Self.values(of: .HEADER_KIND, on: connection)
        var query: [String: String] = [:]
        for (name, value) in Self.values(of: .GET_ARGUMENT_KIND, on: connection) {
            query[name] = value
        }
        var remote: String?
        if let info = mhd_get_connection_info(connection, .CONNECTION_INFO_CLIENT_ADDRESS),
           let address = info.pointee.client_addr {
            remote = SocketAddress.describe(address)
        }
        self.init(
            id: id,
            method: method.map { String(cString: $0) } ?? "",
            path: url.map { String(cString: $0) } ?? "/",
            query: query,
            headers: HTTPHeaders(headers),
            remoteAddress: remote
        )
    }

    private static func values(of kind: MHD_ValueKind, on connection: OpaquePointer) -> [(String, String)] {
        var pairs: [(String, String)] = []
        withUnsafeMutablePointer(to: &pairs) { pointer in
            _ = MHD_get_connection_values(connection, kind, appendPair, pointer)
        }
        return pairs
    }

    /// The declared body length, if the client sent a valid Content-Length.
    var contentLength: Int? {
        headers["Content-Length"].flatMap(Self.singleToken).flatMap { Int($0) }
    }

    /// A header value that is one token between optional spaces and tabs: that token.
    private static func singleToken(_ value: String) -> Substring? {
        // On the bytes: a Character split walks grapheme boundaries (asked twice a request).
        let fields = value.utf8.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 })
        return fields.count == 1 ? Substring(fields[0]) : nil
    }

    /// Why the request's framing cannot be trusted, if it cannot: the status, code and message
    /// it is refused with (and its connection closed). Two Content-Lengths, or a
    /// Content-Length beside a Transfer-Encoding, let a proxy in front of us and libmicrohttpd
    /// (which takes the first, or the chunked framing) disagree on where the request ends, so
    /// that bytes one of them reads as a body the other reads as a second request (request
    /// smuggling; RFC 9112 6.3). A transfer coding other than chunked cannot be read at all:
    /// libmicrohttpd would wait for a body it never finds.
    var framingProblem: (status: Int, code: String, message: String)? {
        let lengths = headers.values(name: "Content-Length")
        let codings = headers.values(name: "Transfer-Encoding")
        if lengths.count > 1 {
            return (400, "malformed_request", "The request has more than one Content-Length header.")
        }
        if !lengths.isEmpty && !codings.isEmpty {
            return (400, "malformed_request", "The request has both Content-Length and Transfer-Encoding.")
        }
        if codings.count > 1 || codings.contains(where: { Self.singleToken($0).map { HTTPHeaders.sameName(String($0), "chunked") } != true }) {
            return (501, "not_implemented", "Transfer-Encoding \(codings.joined(separator: ", ")) is not supported; send Content-Length or chunked.")
        }
        return nil
    }

    /// Whether a body follows the head (a positive Content-Length or any Transfer-Encoding,
    /// which for a request can only end in chunked).
    var declaresBody: Bool {
        (contentLength ?? 0) > 0 || headers["Transfer-Encoding"] != nil
    }
}
