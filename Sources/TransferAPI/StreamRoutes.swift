internal import FoundationEssentials
internal import HTTPServer
internal import TransferModel
internal import TransferService

/// /v1/tasks/{tid}/{write,read,close-write,close-read,start-tls}: a stream task's bytes and
/// sides. Each answers once the engine has carried it out (a held request, no thread): a write
/// once its bytes are in the stream's send buffer (or its timeout passed), a read once `min`
/// bytes arrived, the stream ended or `wait` passed.
enum StreamRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("POST", "/v1/tasks/{tid}/write") { request in
            let id = try request.taskId()
            let timeout = try request.seconds("timeout", default: 60)
            guard !request.http.body.isEmpty else {
                throw APIError(400, "empty_write", "a write needs at least one byte; close the write side with POST /v1/tasks/\(id)/close-write")
            }
            let body = request.http.body
            return .held { respond in
                try service.streamWrite(task: id, body, timeout: timeout, owner: request.owner) { respond(response(to: $0)) }
            }
        }
        router.add("GET", "/v1/tasks/{tid}/read") { request in
            let id = try request.taskId()
            let max = try request.count("max", default: 65_536, in: 1...TransferService.maxStreamRead)
            let min = try request.count("min", default: 1, in: 0...TransferService.maxStreamRead)
            guard min <= max else { throw APIError(400, "invalid_query", "min (\(min)) must not exceed max (\(max))", field: "min") }
            let wait = try request.wait()
            return .held { respond in
                try service.streamRead(task: id, min: min, max: max, wait: wait, owner: request.owner) { respond(response(to: $0)) }
            }
        }
        let sides: [(String, @Sendable (TransferService, Int, String?, @escaping @Sendable (StreamReply) -> Void) throws -> Void)] = [
            ("close-write", { try $0.streamCloseWrite(task: $1, owner: $2, answer: $3) }),
            ("close-read", { try $0.streamCloseRead(task: $1, owner: $2, answer: $3) }),
            ("start-tls", { try $0.streamStartTLS(task: $1, owner: $2, answer: $3) }),
        ]
        for (path, action) in sides {
            router.add("POST", "/v1/tasks/{tid}/\(path)") { request in
                let id = try request.taskId()
                _ = try request.decode(EmptyRequest.self)
                return .later { respond in try action(service, id, request.owner) { respond(response(to: $0)) } }
            }
        }
    }

    /// The HTTP answer to the engine's reply.
    static func response(to reply: StreamReply) -> HTTPResponse {
        switch reply {
        case .read(let bytes, let ended):
            let headers = HTTPHeaders([("Content-Type", "application/octet-stream"), ("X-Stream-End", ended ? "true" : "false")])
            return HTTPResponse(status: 200, headers: headers, body: Data(bytes))
        case .written(let accepted, let timedOut):
            return .json(WriteResult(accepted: accepted, timedOut: timedOut))
        case .done:
            return HTTPResponse(status: 204)
        case .refused(let code, let message):
            return APIError(409, code, message).response
        case .failed(let error):
            guard error.code != URLErrorCode.cancelled.rawValue else { return APIError(409, "task_completed", "the stream task was cancelled").response }
            // The peer or the network failed the stream (the task completed with this error).
            var failure = APIError(502, "stream_failed", "the stream failed (\(error.name)): \(error.message)")
            failure.urlErrorCode = error.code
            return failure.response
        }
    }
}

/// The answer to a write: how many of its bytes the stream took (all unless `timedOut`).
struct WriteResult: Encodable {
    let accepted: Int
    let timedOut: Bool
}

extension APIRequest {
    /// A query parameter of seconds (>= 0).
    func seconds(_ name: String, default value: Double) throws -> Double {
        guard let text = http.query[name] else { return value }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
            throw APIError(400, "invalid_query", "\(name) must be a number of seconds of 0 or more", field: name)
        }
        return seconds
    }

    /// A query parameter that counts bytes, within `range`.
    func count(_ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = http.query[name] else { return value }
        guard let count = Int(text), range.contains(count) else {
            throw APIError(400, "invalid_query", "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)", field: name)
        }
        return count
    }
}
