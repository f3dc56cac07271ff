internal import JSONModel

/// The parts of transferd's JSON answers transferctl reads (openapi.yaml: Task, ProgressSnapshot,
/// Session, Blob, the list pages). Fields it does not use are left out; `--json` prints the
/// daemon's own bytes, so nothing is lost for scripts.
struct TaskInfo: Decodable, Equatable {
    /// The task's `originalRequest`, as far as transferctl shows it.
    struct Request: Decodable, Equatable {
        var url: String
        var method: String
    }

    /// The origin's `response`: its status, type and suggested filename.
    struct Response: Decodable, Equatable {
        var statusCode: Int
        var mimeType: String?
        var suggestedFilename: String?
        var headers: [String: String]?

        /// A header, its name in any case.
        func header(_ name: String) -> String? {
            let wanted = name.lowercased()
            return headers?.first { $0.key.lowercased() == wanted }?.value
        }

        /// Content-Range's first byte and total: "bytes 100-199/200" is (100, 200), "bytes */200" (nil, 200).
        var contentRange: (start: Int64?, total: Int64?)? {
            guard let value = header("Content-Range"), value.hasPrefix("bytes ") else { return nil }
            let spec = value.dropFirst(6)
            guard let slash = spec.lastIndex(of: "/") else { return nil }
            let total = Int64(spec[spec.index(after: slash)...])
            let range = spec[..<slash]
            if range == "*" { return (nil, total) }
            guard let dash = range.firstIndex(of: "-"), let start = Int64(range[..<dash]) else { return nil }
            return (start, total)
        }
    }

    var id: Int64
    var sessionId: String
    var kind: String
    var state: String
    var phase: String
    var priority: Double
    var description: String?
    var originalRequest: Request
    var response: Response?
    var progress: ProgressFigures
    var error: TaskFailure?
    var location: String?
    /// A completed task's digests by algorithm (`sha-256` always).
    var digest: [String: String]?
    var version: Int64
}

/// A task's `progress` object.
struct ProgressFigures: Decodable, Equatable {
    var bytesReceived: Int64
    var bytesExpectedToReceive: Int64?
    var bytesSent: Int64
    var bytesExpectedToSend: Int64?
    var fractionCompleted: Double?
    var bytesPerSecond: Double
    var secondsRemaining: Double?
}

/// A task's `error` (a URLError).
struct TaskFailure: Decodable, Equatable {
    var code: Int
    var name: String
    var message: String
    var resumeData: String?
}

/// The answer of `GET /v1/tasks/{tid}/progress`.
struct ProgressSnapshot: Decodable, Equatable {
    var taskId: Int64
    var state: String
    var phase: String
    var progress: ProgressFigures
    var error: TaskFailure?
    var version: Int64
}

/// A session as `sessions` lists it and `SessionChoice` looks for transferctl's own.
struct SessionInfo: Decodable, Equatable {
    var id: String
    var kind: String
    var identifier: String?
    var description: String?
    var state: String
    var createdAt: String
}

/// One page of a list (`{"items": [...], "next": CURSOR|null}`).
struct Page<Item: Decodable>: Decodable {
    var items: [Item]
    var next: String?
}

/// One page of a session's event feed.
struct EventPage: Decodable {
    var events: [JSONValue]
    var next: Int64
}

/// The answer of `POST /v1/blobs`: the id an upload task's `{"blob": ID}` body names.
struct BlobInfo: Decodable {
    var id: String
    var size: Int64
}

/// The error body every failed API call answers: `{"error": {"code", "message"}}`.
struct APIErrorBody: Decodable {
    /// The stable `code` and the message for people.
    struct Detail: Decodable {
        var code: String
        var message: String
    }
    var error: Detail
}
