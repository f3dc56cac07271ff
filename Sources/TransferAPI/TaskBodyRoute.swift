internal import FoundationEssentials
internal import HTTPServer
internal import TransferModel
internal import TransferService

/// `GET /v1/tasks/{tid}/body`: a completed task's body, or a running data task's as it arrives
/// (issue 21): what is there at once, then the rest as it comes, ending when the task completes
/// (or cut off, so the client sees an error, when it fails). `Range` works on both; several
/// readers may follow one task, each at its own pace (`BodyFollower`).
enum TaskBodyRoute {
    /// How long a request for a task without its response yet is held, at most.
    static let longestWait: Duration = .seconds(60)

    static func answer(_ service: TransferService, task id: Int, _ request: APIRequest,
                       deadline: ContinuousClock.Instant = .now + longestWait) throws -> RouteResult {
        guard let body = try service.followBody(task: id, owner: request.owner) else {
            // Not started, or no response yet: held (no thread) until the task moves, for a
            // minute at most; a suspended one is not waited for.
            let task = try service.task(id, owner: request.owner)
            let left = deadline - .now
            guard task.state == .running, left > .zero else {
                throw APIError(409, "task_not_completed", "task \(id) is \(task.state.rawValue) and has no response yet; its body can be followed once it has one")
            }
            return .held { respond in
                try service.progress(task: id, after: task.version, wait: min(30, Double(left.components.seconds) + 1), owner: request.owner) { _ in
                    do {
                        switch try answer(service, task: id, request, deadline: deadline) {
                        case .now(let response): respond(response)
                        case .later(let start), .held(let start): try start(respond)
                        }
                    } catch {
                        respond(APIError.from(error).response)
                    }
                }
            }
        }
        let range = request.http.headers["Range"]
        switch body {
        case .complete(let data, let contentType):
            var headers = HTTPHeaders([("Content-Type", contentType ?? "application/octet-stream"), ("Accept-Ranges", "bytes")])
            switch ByteRange.parse(range, size: data.count) {
            case .whole:
                return .now(HTTPResponse(status: 200, headers: headers, body: data))
            case .part(let first, let last):
                headers.add(name: "Content-Range", value: "bytes \(first)-\(last)/\(data.count)")
                return .now(HTTPResponse(status: 206, headers: headers, body: data.subdata(in: first..<last + 1)))
            case .unsatisfiable:
                return .now(unsatisfiable("the body has \(data.count) bytes", total: String(data.count)))
            }
        case .running(let running):
            return .now(try streamed(running, range: range))
        }
    }

    /// A running body from a range: with a known length as a file's would be; without one, only
    /// a range that names its last byte can be answered before the end is known.
    private static func streamed(_ running: RunningBody, range: String?) throws -> HTTPResponse {
        var headers = HTTPHeaders([("Content-Type", running.contentType ?? "application/octet-stream"), ("Accept-Ranges", "bytes")])
        let total = running.expectedLength
        let part: (first: Int, last: Int?)?
        if let total {
            switch ByteRange.parse(range, size: total) {
            case .whole: part = nil
            case .part(let first, let last): part = (first, last)
            case .unsatisfiable: return unsatisfiable("the body has \(total) bytes", total: String(total))
            }
        } else {
            switch OpenRange.parse(range) {
            case .whole: part = nil
            case .closed(let first, let last): part = (first, last)
            case .needsLength:
                return unsatisfiable("the body's length is not known until it ends: ask a range with its last byte (bytes=FIRST-LAST)", total: "*")
            }
        }
        guard let part else {
            return HTTPResponse(status: 200, headers: headers, body: .stream(FollowedBody(running.follow()), length: total))
        }
        let last = part.last!
        headers.add(name: "Content-Range", value: "bytes \(part.first)-\(last)/\(total.map(String.init) ?? "*")")
        // A range to the body's last byte reads as the whole body does: its end only once the
        // task succeeded.
        let follower = running.follow(from: part.first, to: total == last + 1 ? nil : last + 1)
        return HTTPResponse(status: 206, headers: headers, body: .stream(FollowedBody(follower), length: last - part.first + 1))
    }

    private static func unsatisfiable(_ message: String, total: String) -> HTTPResponse {
        var error = APIError(416, "range_not_satisfiable", message)
        error.headers = [("Content-Range", "bytes */\(total)")]
        return error.response
    }
}

/// A `Range` of a body whose length is not known yet: only `bytes=FIRST-LAST` can be served.
private enum OpenRange {
    case whole
    case closed(first: Int, last: Int)
    case needsLength

    static func parse(_ raw: String?) -> OpenRange {
        let header = raw.map { String($0.filter { $0 != " " }) }
        // Parsed against an unbounded size: a closed range keeps its last byte, an open or a
        // suffix range would need the real length.
        switch ByteRange.parse(header, size: .max) {
        case .whole: return .whole
        case .unsatisfiable: return .needsLength
        case .part(let first, let last):
            guard let header, !header.hasSuffix("-"), !header.contains("=-") else { return .needsLength }
            return .closed(first: first, last: last)
        }
    }
}

/// The server's side of one `BodyFollower`.
private final class FollowedBody: HTTPBodyStream {
    let follower: BodyFollower

    init(_ follower: BodyFollower) { self.follower = follower }

    func read(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) -> HTTPBodyStreamRead {
        switch follower.read(into: buffer, wake: wake) {
        case .bytes(let count): .bytes(count)
        case .wait: .wait
        case .end: .end
        case .failed: .failed
        }
    }

    func close() { follower.close() }
}
