internal import FoundationEssentials
public import HTTPServer
internal import TransferModel
internal import TransferStore

/// An error as a client sees it: an HTTP status and the body
/// `{"error": {"code": "...", "message": "...", "field": "..."}}` (API.md). Every failure a
/// handler can meet is turned into one of these in `APIError.from`, the one place that decides
/// statuses and codes.
public struct APIError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String
    public var field: String?
    /// The URLError code the condition has in URLSession (-996 for a background session in use),
    /// served beside `code` so a client can map it as URLSession would.
    public var urlErrorCode: Int?
    public var headers: [(String, String)] = []

    public init(_ status: Int, _ code: String, _ message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    public static func == (a: APIError, b: APIError) -> Bool {
        a.status == b.status && a.code == b.code && a.message == b.message && a.field == b.field
    }

    static func notFound(_ message: String) -> APIError { APIError(404, "not_found", message) }

    /// The response carrying this error.
    public var response: HTTPResponse {
        var response = HTTPServerConfiguration.jsonErrorResponse(status: status, code: code, message: message)
        if field != nil || urlErrorCode != nil {
            let body = ErrorBody(error: .init(code: code, message: message, field: field, urlErrorCode: urlErrorCode))
            response = HTTPResponse(status: status, headers: response.headers, body: (try? JSONCoding.encoder.encode(body)) ?? Data())
        }
        for (name, value) in headers { response.headers.add(name: name, value: value) }
        return response
    }

    /// Maps anything a handler throws to the client's error. Unknown errors are 500s: they are
    /// our bugs, never the client's input.
    public static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError: return error
        case let error as ServiceError:
            switch error {
            case .notFound(let message): return .notFound(message)
            case .conflict(let code, let message): return APIError(409, code, message)
            // The service raises it only for a list's cursor (filters are checked by the routes).
            case .invalidQuery(let message): return APIError(400, "invalid_query", message, field: "cursor")
            case .shuttingDown: return APIError(503, "shutting_down", "the daemon is shutting down; retry against the next instance")
            case .storage(let message): return APIError(507, "insufficient_storage", message)
            case .quotaExceeded(let quota):
                switch quota {
                case .tasks: return APIError(429, "quota_exceeded", quota.message)
                case .disk: return APIError(507, "quota_exceeded", quota.message)
                }
            case .backgroundSessionInUse(let message):
                var error = APIError(409, "background_session_in_use", message)
                error.urlErrorCode = URLErrorCode.backgroundSessionInUseByAnotherProcess.rawValue
                return error
            }
        case let error as StoreFailure:
            switch error.kind {
            case .diskFull:
                return APIError(507, code(of: error), "the write was not committed: \(error); free space on the data folder's disk, then retry")
            case .unavailable:
                return APIError(503, code(of: error), "the write was not committed: \(error); retry later")
            }
        case let error as StoreReadFailure:
            return APIError(503, "store_unavailable", "the store cannot be read now (\(error)); retry later")
        case let error as InputError:
            switch error {
            case .unknownField(let field): return APIError(400, "unknown_field", "\(field) is not a known field", field: field)
            case .invalidValue(let field, let message): return APIError(422, "invalid_value", "\(field) \(message)", field: field)
            case .notImplemented(let field, let message): return APIError(422, "not_implemented", message, field: field)
            case .refused(let field, let code, let message): return APIError(400, code, message, field: field)
            case .tooLarge(let field, let message): return APIError(413, "too_large", "\(field) \(message)", field: field)
            }
        case let error as RequestURL.Malformed:
            return APIError(422, "invalid_url", "\(error.field) \(error.message)", field: error.field)
        case let error as DecodingError:
            return from(decoding: error)
        default:
            return APIError(500, "internal_error", "an internal error occurred")
        }
    }

    /// The stable code of a store that cannot commit: `insufficient_storage` (507 for a write)
    /// when the disk is full, else `store_unavailable` (503).
    static func code(of failure: StoreFailure) -> String {
        failure.kind == .diskFull ? "insufficient_storage" : "store_unavailable"
    }

    private static func from(decoding error: DecodingError) -> APIError {
        switch error {
        case .keyNotFound(let key, let context):
            let field = fieldPath(context.codingPath + [key])
            return APIError(400, "missing_field", "\(field) is required", field: field)
        case .typeMismatch(let type, let context):
            let field = fieldPath(context.codingPath)
            return APIError(400, "invalid_type", field.isEmpty ? "the body must be a JSON object" : "\(field) must be \(describe(type))", field: field.isEmpty ? nil : field)
        case .valueNotFound(let type, let context):
            let field = fieldPath(context.codingPath)
            return APIError(400, "invalid_type", "\(field) must be \(describe(type)), not null", field: field)
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return APIError(400, "malformed_json", "the body is not valid JSON")
            }
            let field = fieldPath(context.codingPath)
            return APIError(422, "invalid_value", "\(field) has a value that is not allowed", field: field)
        @unknown default:
            return APIError(400, "malformed_json", "the body could not be read")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type: return "an integer"
        case is Double.Type: return "a number"
        case is [Any].Type: return "an array"
        default:
            let name = String(describing: type)
            return name.hasPrefix("Dictionary") || name.hasPrefix("KeyedDecodingContainer") ? "an object" : "a \(name)"
        }
    }
}

/// The JSON shape of an error body.
struct ErrorBody: Encodable {
    struct Detail: Encodable {
        let code: String
        let message: String
        let field: String?
        var urlErrorCode: Int? = nil
    }
    let error: Detail
}
