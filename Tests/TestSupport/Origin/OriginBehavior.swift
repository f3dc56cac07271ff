public import Foundation

/// What ``OriginServer`` does with one request: a well-formed response or an exact fault.
///
/// Unless a case says otherwise, `Content-Length` is added from the body when `headers` has
/// neither `Content-Length` nor `Transfer-Encoding`; a `Content-Length` in `headers` is sent as
/// given, even if wrong. Responses to `HEAD` carry no body. After ``respond(status:headers:body:)``,
/// ``chunked(status:headers:chunks:interval:)`` and ``slowBody(status:headers:body:bytesPerWrite:interval:)``
/// the connection stays open for the next request unless the request or `headers` say
/// `Connection: close`; every other case closes it.
public indirect enum OriginBehavior: Sendable {
    /// A complete response.
    case respond(status: Int = 200, headers: [String: String] = [:], body: Data = Data())

    /// A `Transfer-Encoding: chunked` response, one chunk per element (empty elements are skipped),
    /// with `interval` between chunks.
    case chunked(status: Int = 200, headers: [String: String] = [:], chunks: [Data], interval: Duration = .zero)

    /// A `Transfer-Encoding: chunked` response cut short: the chunks, then the connection closes
    /// (FIN) without the last, empty chunk that would end the body.
    case chunkedCut(status: Int = 200, headers: [String: String] = [:], chunks: [Data])

    /// A response without `Content-Length` whose body ends when the server closes the connection.
    case closeDelimited(status: Int = 200, headers: [String: String] = [:], body: Data)

    /// The body trickles: `bytesPerWrite` bytes, then `interval`, and so on; the first write
    /// follows the headers at once. `Content-Length` is the whole body's.
    case slowBody(status: Int = 200, headers: [String: String] = [:], body: Data, bytesPerWrite: Int, interval: Duration)

    /// Sends the headers and `bodyPrefix`, then sends nothing more until the client closes or the
    /// server stops. `contentLength` is declared if given (it should exceed `bodyPrefix.count`);
    /// with nil no length is declared, so the body would end at close.
    case stallAfterHeaders(status: Int = 200, headers: [String: String] = [:], contentLength: Int? = nil, bodyPrefix: Data = Data())

    /// Declares the whole body's `Content-Length`, sends its first `afterBytes` bytes, then resets
    /// the connection (SO_LINGER 0: the client sees ECONNRESET, not a clean end).
    case resetMidBody(afterBytes: Int, status: Int = 200, headers: [String: String] = [:], body: Data)

    /// Declares `Content-Length: declared` but sends only `body`, then closes cleanly (FIN):
    /// the client sees the stream end early.
    case wrongLength(declared: Int, status: Int = 200, headers: [String: String] = [:], body: Data)

    /// Waits `by` before doing `then`: a delay before the headers. The wait ends early if the
    /// client closes or the server stops.
    case delayed(by: Duration, then: OriginBehavior)

    /// Closes the connection without sending anything (FIN).
    case closeWithoutResponse

    /// Resets the connection without sending anything (RST).
    case resetWithoutResponse
}

extension OriginBehavior {
    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200, headers: [String: String] = [:]) -> OriginBehavior {
        var headers = headers
        if HeaderLookup.value("Content-Type", in: headers) == nil {
            headers["Content-Type"] = "text/plain; charset=utf-8"
        }
        return .respond(status: status, headers: headers, body: Data(text.utf8))
    }

    /// A redirect: `status` (301, 302, 303, 307 or 308) with `Location: location` and an empty body.
    public static func redirect(to location: String, status: Int = 302, headers: [String: String] = [:]) -> OriginBehavior {
        var headers = headers
        headers["Location"] = location
        return .respond(status: status, headers: headers, body: Data())
    }

    /// Serves `body` to `request` with or without honouring its `Range` header.
    ///
    /// With ``RangeSupport/honor``: `Accept-Ranges: bytes`; a satisfiable `bytes=N-`, `bytes=N-M`
    /// or `bytes=-S` gets 206 with `Content-Range`; an unsatisfiable one gets 416 with
    /// `Content-Range: bytes */LENGTH`; an `If-Range` that does not equal the `ETag` or
    /// `Last-Modified` in `headers` gets the full 200 (the representation changed).
    /// With ``RangeSupport/ignore``: always the full body with 200, as a server without range support.
    /// Multiple ranges are not supported: they get the full 200, which RFC 9110 allows.
    public static func ranged(
        _ body: Data,
        for request: OriginRequest,
        headers: [String: String] = [:],
        support: RangeSupport = .honor
    ) -> OriginBehavior {
        guard support == .honor else {
            return .respond(status: 200, headers: headers, body: body)
        }
        var headers = headers
        headers["Accept-Ranges"] = "bytes"
        guard let rangeHeader = request.header("Range"), ifRangeMatches(request, headers) else {
            return .respond(status: 200, headers: headers, body: body)
        }
        switch ByteRange.parse(rangeHeader, length: body.count) {
        case .none:
            return .respond(status: 200, headers: headers, body: body)
        case .unsatisfiable:
            headers["Content-Range"] = "bytes */\(body.count)"
            return .respond(status: 416, headers: headers, body: Data())
        case .range(let range):
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(body.count)"
            return .respond(status: 206, headers: headers, body: body.subdata(in: range))
        }
    }

    private static func ifRangeMatches(_ request: OriginRequest, _ headers: [String: String]) -> Bool {
        guard let validator = request.header("If-Range") else { return true }
        return validator == HeaderLookup.value("ETag", in: headers)
            || validator == HeaderLookup.value("Last-Modified", in: headers)
    }
}

/// Whether ``OriginBehavior/ranged(_:for:headers:support:)`` honours `Range` requests.
public enum RangeSupport: Sendable {
    case honor
    case ignore
}

/// A parsed single `Range: bytes=...` header.
enum ByteRange: Equatable {
    /// Not a single byte range: serve the whole body.
    case none
    case unsatisfiable
    case range(Range<Int>)

    static func parse(_ header: String, length: Int) -> ByteRange {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes=") else { return .none }
        let spec = value.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .none }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            // bytes=-S: the last S bytes.
            guard let suffix = Int(last) else { return .none }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .range(max(0, length - suffix)..<length)
        }
        guard let start = Int(first), start >= 0 else { return .none }
        guard start < length else { return .unsatisfiable }
        if last.isEmpty { return .range(start..<length) }
        guard let end = Int(last), end >= start else { return .none }
        return .range(start..<min(end + 1, length))
    }
}
