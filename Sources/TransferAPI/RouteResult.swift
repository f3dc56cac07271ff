internal import FoundationEssentials
public import HTTPServer
internal import TransferModel

/// What a route handler gives back: a response now, or a long-poll that answers later through
/// the function it is handed (called exactly once, from any thread).
public enum RouteResult: Sendable {
    case now(HTTPResponse)
    case later(@Sendable (_ respond: @escaping @Sendable (HTTPResponse) -> Void) throws -> Void)
    /// A long-poll: answered like `later`, but the wait after the handler returns is the
    /// client's (`wait=`), so the latency histogram leaves it out (`LongPollHold`).
    case held(@Sendable (_ respond: @escaping @Sendable (HTTPResponse) -> Void) throws -> Void)

    /// A JSON response of an Encodable value.
    static func json(_ value: some Encodable, status: Int = 200) -> RouteResult {
        .now(.json(value, status: status))
    }

    /// A task: chosen over the generic one, so every task answer uses the fast writer.
    static func json(_ task: TransferTask, status: Int = 200) -> RouteResult {
        .now(.json(task, status: status))
    }

    /// A page of events, likewise.
    static func json(_ page: EventPage, status: Int = 200) -> RouteResult {
        .now(.json(page, status: status))
    }
}

extension HTTPResponse {
    static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        guard let body = try? JSONCoding.encoder.encode(value) else {
            return APIError(500, "internal_error", "the response could not be encoded").response
        }
        return HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: body)
    }

    /// A task, written by `TaskJSONWriter` (the bytes JSONCoding.encoder would write, faster).
    static func json(_ task: TransferTask, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: task.jsonData())
    }

    /// A page of events, written by `TaskJSONWriter` likewise.
    static func json(_ page: EventPage, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: page.jsonData())
    }
}

/// A page of a list: `{"items": [...], "next": cursor|null}`.
struct Page<Item: Encodable>: Encodable {
    let items: [Item]
    @NullEncoded var next: String?
}
