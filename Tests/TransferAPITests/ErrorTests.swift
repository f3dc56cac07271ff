import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// One bad request and the error it must get. `path` may hold `{sid}` (a session), `{tid}` (a
/// suspended task in it) and `{done}` (a task that completed with an error).
struct ErrorCase: Sendable, CustomTestStringConvertible {
    var method: String
    var path: String
    var body: String?
    var contentType: String?
    var status: Int
    var code: String
    var field: String?
    var allow: Set<String>?

    var testDescription: String {
        let shown = body.map { " " + ($0.count > 70 ? String($0.prefix(70)) + "…" : $0) } ?? ""
        return "\(method) \(path)\(shown) → \(status) \(code)\(field.map { " (\($0))" } ?? "")"
    }

    /// A request with a JSON body (Content-Type: application/json).
    static func json(_ method: String, _ path: String, _ body: String, _ status: Int, _ code: String, field: String? = nil) -> ErrorCase {
        ErrorCase(method: method, path: path, body: body, contentType: "application/json", status: status, code: code, field: field)
    }

    /// A request without a body.
    static func bare(_ method: String, _ path: String, _ status: Int, _ code: String, field: String? = nil, allow: Set<String>? = nil) -> ErrorCase {
        ErrorCase(method: method, path: path, status: status, code: code, field: field, allow: allow)
    }

    /// POST /v1/sessions/{sid}/tasks with `body`.
    static func task(_ body: String, _ status: Int, _ code: String, field: String? = nil) -> ErrorCase {
        json("POST", "/v1/sessions/{sid}/tasks", body, status, code, field: field)
    }

    /// A data task whose request has `fields` (JSON members) besides a good URL.
    static func request(_ fields: String, _ status: Int, _ code: String, field: String? = nil) -> ErrorCase {
        task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/", \#(fields)}}"#, status, code, field: field)
    }

    static func url(_ url: String) -> ErrorCase {
        task(#"{"kind": "data", "request": {"url": \#(url)}}"#, 422, "invalid_url", field: "request.url")
    }

    static func session(_ body: String, _ status: Int, _ code: String, field: String? = nil) -> ErrorCase {
        json("POST", "/v1/sessions", body, status, code, field: field)
    }
}

@Suite struct ErrorTests {
    static let cases: [ErrorCase] = malformed + types + unknownFields + missingFields + invalidValues
        + invalidURLs + notImplemented + mediaTypes + notFound + methods + queries + conflicts

    static let malformed: [ErrorCase] = [
        .session(#"{"kind": "#, 400, "malformed_json"),
        .session(#"{"kind": "default""#, 400, "malformed_json"),
        .task("not json at all", 400, "malformed_json"),
        .json("PATCH", "/v1/tasks/{tid}", #"{"priority": 0.5,}"#, 400, "malformed_json"),
        .json("POST", "/v1/sessions/{sid}/invalidate", "{", 400, "malformed_json"),
        .json("POST", "/v1/tasks/{tid}/cancel", "\u{1}\u{2}", 400, "malformed_json"),
    ]

    static let types: [ErrorCase] = [
        .session("[1, 2]", 400, "invalid_type"),
        .session(#""a string""#, 400, "invalid_type"),
        .session(#"{"kind": 5}"#, 400, "invalid_type", field: "kind"),
        .session(#"{"description": 12}"#, 400, "invalid_type", field: "description"),
        .session(#"{"configuration": []}"#, 400, "invalid_type", field: "configuration"),
        .session(#"{"configuration": {"timeoutIntervalForRequest": "fast"}}"#, 400, "invalid_type", field: "configuration.timeoutIntervalForRequest"),
        .session(#"{"configuration": {"allowsCellularAccess": "yes"}}"#, 400, "invalid_type", field: "configuration.allowsCellularAccess"),
        .session(#"{"configuration": {"httpMaximumConnectionsPerHost": 2.5}}"#, 400, "invalid_type", field: "configuration.httpMaximumConnectionsPerHost"),
        .session(#"{"configuration": {"httpAdditionalHeaders": {"X-A": 1}}}"#, 400, "invalid_type", field: "configuration.httpAdditionalHeaders.X-A"),
        .task(#"{"kind": "data", "request": "http://127.0.0.1:9/"}"#, 400, "invalid_type", field: "request"),
        .task(#"{"kind": "data", "request": {"url": 5}}"#, 400, "invalid_type", field: "request.url"),
        .request(#""timeoutInterval": "1""#, 400, "invalid_type", field: "request.timeoutInterval"),
        .request(#""method": 7"#, 400, "invalid_type", field: "request.method"),
        .request(#""headers": {"A": null}"#, 400, "invalid_type", field: "request.headers.A"),
        .request(#""headers": ["A"]"#, 400, "invalid_type", field: "request.headers"),
        .request(#""body": {"text": 5}"#, 400, "invalid_type", field: "request.body.text"),
        .request(#""body": "raw""#, 400, "invalid_type", field: "request.body"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "state": true}"#, 400, "invalid_type", field: "state"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "description": 1}"#, 400, "invalid_type", field: "description"),
        .json("POST", "/v1/sessions/{sid}/invalidate", #"{"cancelTasks": "yes"}"#, 400, "invalid_type", field: "cancelTasks"),
        .json("PATCH", "/v1/tasks/{tid}", #"{"description": 5}"#, 400, "invalid_type", field: "description"),
        .json("POST", "/v1/tasks/{tid}/cancel", #"{"produceResumeData": 1}"#, 400, "invalid_type", field: "produceResumeData"),
    ]

    static let unknownFields: [ErrorCase] = [
        .session(#"{"knd": "default"}"#, 400, "unknown_field", field: "knd"),
        .session(#"{"configuration": {"timeoutIntervalForRequst": 5}}"#, 400, "unknown_field", field: "configuration.timeoutIntervalForRequst"),
        .request(#""bdy": {"text": "a"}"#, 400, "unknown_field", field: "request.bdy"),
        .request(#""body": {"txt": "a"}"#, 400, "unknown_field", field: "request.body.txt"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "priorty": 1}"#, 400, "unknown_field", field: "priorty"),
        .json("PATCH", "/v1/tasks/{tid}", #"{"state": "running"}"#, 400, "unknown_field", field: "state"),
        .json("POST", "/v1/sessions/{sid}/invalidate", #"{"cancel": true}"#, 400, "unknown_field", field: "cancel"),
        .json("POST", "/v1/tasks/{tid}/resume", #"{"now": true}"#, 400, "unknown_field", field: "now"),
        .json("POST", "/v1/tasks/{tid}/suspend", #"{"now": true}"#, 400, "unknown_field", field: "now"),
        .json("POST", "/v1/tasks/{tid}/cancel", #"{"produceResumeDat": true}"#, 400, "unknown_field", field: "produceResumeDat"),
    ]

    static let missingFields: [ErrorCase] = [
        .task("{}", 400, "missing_field", field: "kind"),
        .task(#"{"request": {"url": "http://127.0.0.1:9/"}}"#, 400, "missing_field", field: "kind"),
        .task(#"{"kind": "data"}"#, 400, "missing_field", field: "request"),
        .task(#"{"kind": "data", "request": {}}"#, 400, "missing_field", field: "request.url"),
        .task(#"{"kind": "data", "request": {"method": "GET"}}"#, 400, "missing_field", field: "request.url"),
        .session(#"{"kind": "background"}"#, 400, "missing_field", field: "identifier"),
        .bare("POST", "/v1/sessions/{sid}/tasks", 400, "missing_field", field: "kind"),
    ]

    static let invalidValues: [ErrorCase] = [
        .session(#"{"kind": "foreground"}"#, 422, "invalid_value", field: "kind"),
        .session(#"{"identifier": "com.example.x"}"#, 422, "invalid_value", field: "identifier"),
        .session(#"{"kind": "ephemeral", "identifier": "com.example.x"}"#, 422, "invalid_value", field: "identifier"),
        .session(#"{"kind": "background", "identifier": ""}"#, 422, "invalid_value", field: "identifier"),
        .session(#"{"configuration": {"networkServiceType": "fast"}}"#, 422, "invalid_value", field: "configuration.networkServiceType"),
        .session(#"{"configuration": {"requestCachePolicy": "sometimes"}}"#, 422, "invalid_value", field: "configuration.requestCachePolicy"),
        .session(#"{"configuration": {"httpCookieAcceptPolicy": "maybe"}}"#, 422, "invalid_value", field: "configuration.httpCookieAcceptPolicy"),
        .session(#"{"configuration": {"tlsMinimumSupportedProtocolVersion": "SSLv3"}}"#, 422, "invalid_value", field: "configuration.tlsMinimumSupportedProtocolVersion"),
        .session(#"{"configuration": {"httpVersion": "spdy"}}"#, 422, "invalid_value", field: "configuration.httpVersion"),
        .session(#"{"configuration": {"tlsMinimumSupportedProtocolVersion": "TLSv13", "tlsMaximumSupportedProtocolVersion": "TLSv12"}}"#, 422, "invalid_value", field: "configuration.tlsMinimumSupportedProtocolVersion"),
        .session(#"{"configuration": {"httpMaximumConnectionsPerHost": 0}}"#, 422, "invalid_value", field: "configuration.httpMaximumConnectionsPerHost"),
        .session(#"{"configuration": {"httpMaximumConnectionsPerHost": 65}}"#, 422, "invalid_value", field: "configuration.httpMaximumConnectionsPerHost"),
        .session(#"{"configuration": {"timeoutIntervalForRequest": 0}}"#, 422, "invalid_value", field: "configuration.timeoutIntervalForRequest"),
        .session(#"{"configuration": {"timeoutIntervalForResource": -1}}"#, 422, "invalid_value", field: "configuration.timeoutIntervalForResource"),
        .session(#"{"configuration": {"httpAdditionalHeaders": {"Bad Name": "x"}}}"#, 422, "invalid_value", field: "configuration.httpAdditionalHeaders"),
        .task(#"{"kind": "bogus", "request": {"url": "http://127.0.0.1:9/"}}"#, 422, "invalid_value", field: "kind"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "state": "bogus"}"#, 422, "invalid_value", field: "state"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "state": "completed"}"#, 422, "invalid_value", field: "state"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "priority": 1.5}"#, 422, "invalid_value", field: "priority"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "priority": -0.1}"#, 422, "invalid_value", field: "priority"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "priority": "urgent"}"#, 422, "invalid_value", field: "priority"),
        .json("PATCH", "/v1/tasks/{tid}", #"{"priority": 2}"#, 422, "invalid_value", field: "priority"),
        .request(#""networkServiceType": "fast""#, 422, "invalid_value", field: "request.networkServiceType"),
        .request(#""cachePolicy": "sometimes""#, 422, "invalid_value", field: "request.cachePolicy"),
        .request(#""method": "GE T""#, 422, "invalid_value", field: "request.method"),
        .request(#""method": """#, 422, "invalid_value", field: "request.method"),
        .request(#""headers": {"Bad Name": "x"}"#, 422, "invalid_value", field: "request.headers"),
        .request(#""headers": {"X-A": "a\r\nInjected: 1"}"#, 422, "invalid_value", field: "request.headers"),
        .request(#""timeoutInterval": 0"#, 422, "invalid_value", field: "request.timeoutInterval"),
        .request(#""timeoutInterval": -5"#, 422, "invalid_value", field: "request.timeoutInterval"),
        .request(#""body": {"text": "a", "base64": "YQ=="}"#, 422, "invalid_value", field: "request.body"),
        .request(#""body": {}"#, 422, "invalid_value", field: "request.body"),
        .request(#""body": {"base64": "abc"}"#, 422, "invalid_value", field: "request.body.base64"),
        .request(#""body": {"base64": "@@@@"}"#, 422, "invalid_value", field: "request.body.base64"),
        .request(#""body": {"base64": "not base64!"}"#, 422, "invalid_value", field: "request.body.base64"),
    ]

    static let invalidURLs: [ErrorCase] = [
        .url(#""not a url""#),
        .url(#""http://""#),
        .url(#""https://""#),
        .url(#""http://exa mple.com""#),
        .url(#""http:///path-without-host""#),
        .url(#""relative/path""#),
        .url(#""""#),
        .url(#""http://example.com/\nline""#),
    ]

    static let notImplemented: [ErrorCase] = [
        .task(#"{"kind": "upload", "request": {"url": "http://127.0.0.1:9/"}}"#, 422, "invalid_value", field: "request.body"),
        .task(#"{"kind": "stream", "host": "example.com", "port": 0}"#, 422, "invalid_value", field: "port"),
        .task(#"{"kind": "stream", "port": 443}"#, 400, "missing_field", field: "host"),
        .task(#"{"kind": "stream", "host": "h", "port": 1, "request": {"url": "http://127.0.0.1:9/"}}"#, 422, "invalid_value", field: "request"),
        .task(#"{"kind": "data", "tls": true, "request": {"url": "http://127.0.0.1:9/"}}"#, 422, "invalid_value", field: "tls"),
        .task(#"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "resumeData": "AAAA"}"#, 422, "invalid_value", field: "request"),
        .task(#"{"kind": "download", "resumeData": "AAAA"}"#, 400, "invalid_resume_data", field: "resumeData"),
        .task(#"{"kind": "download", "resumeData": "eyJ2ZXJzaW9uIjoxfQ.AAAA"}"#, 400, "invalid_resume_data", field: "resumeData"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "destination": "a/b.bin"}"#, 422, "invalid_value", field: "destination"),
        .task(#"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "destination": "../escape.bin"}"#, 400, "invalid_destination", field: "destination"),
        .task(#"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "destination": "/etc/passwd"}"#, 400, "invalid_destination", field: "destination"),
        .task(#"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "destination": "a.bin", "conflict": "overwrite"}"#, 400, "invalid_conflict", field: "conflict"),
        .task(#"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}, "conflict": "replace"}"#, 422, "invalid_value", field: "conflict"),
        .task(#"{"kind": "download", "request": {"url": "http://127.0.0.1:9/"}, "destination": "a/../../b"}"#, 400, "invalid_destination", field: "destination"),
        .request(#""body": {"blob": "b1"}"#, 422, "invalid_value", field: "request.body.blob"),
        .request(#""body": {"file": "a.bin"}"#, 422, "not_implemented", field: "request.body.file"),
        .request(#""body": {"form": []}"#, 422, "invalid_value", field: "request.body.form"),
        .request(#""body": {"form": [{"name": "f", "blob": "nope"}]}"#, 422, "invalid_value", field: "request.body.form[0].blob"),
        .request(#""body": {"stream": true}"#, 422, "invalid_value", field: "request.body.stream"),
    ]

    static let mediaTypes: [ErrorCase] = [
        ErrorCase(method: "POST", path: "/v1/sessions", body: "{}", contentType: "text/plain", status: 415, code: "unsupported_media_type"),
        ErrorCase(method: "POST", path: "/v1/sessions/{sid}/tasks", body: #"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}}"#,
                  contentType: nil, status: 415, code: "unsupported_media_type"),
        ErrorCase(method: "PATCH", path: "/v1/tasks/{tid}", body: "priority=1", contentType: "application/x-www-form-urlencoded",
                  status: 415, code: "unsupported_media_type"),
        ErrorCase(method: "POST", path: "/v1/sessions/{sid}/invalidate", body: "{}", contentType: "application/jsonp",
                  status: 415, code: "unsupported_media_type"),
        // Larger than the table daemon's maxRequestBodySize (4096).
        ErrorCase(method: "POST", path: "/v1/sessions", body: #"{"description": ""# + String(repeating: "x", count: 5000) + #""}"#,
                  contentType: "application/json", status: 413, code: "payload_too_large"),
    ]

    static let notFound: [ErrorCase] = [
        .bare("GET", "/v1/sessions/no-such-session", 404, "not_found"),
        .bare("GET", "/v1/sessions/no-such-session/events", 404, "not_found"),
        .bare("GET", "/v1/sessions/no-such-session/tasks", 404, "not_found"),
        .json("POST", "/v1/sessions/no-such-session/tasks", #"{"kind": "data", "request": {"url": "http://127.0.0.1:9/"}}"#, 404, "not_found"),
        .bare("POST", "/v1/sessions/no-such-session/invalidate", 404, "not_found"),
        .bare("GET", "/v1/tasks/999999", 404, "not_found"),
        .bare("GET", "/v1/tasks/abc", 404, "not_found"),
        .bare("GET", "/v1/tasks/0", 404, "not_found"),
        .bare("GET", "/v1/tasks/-1", 404, "not_found"),
        .bare("GET", "/v1/tasks/999999/progress", 404, "not_found"),
        .bare("GET", "/v1/tasks/999999/progress?after=0&wait=5", 404, "not_found"),
        .bare("GET", "/v1/tasks/999999/body", 404, "not_found"),
        .json("PATCH", "/v1/tasks/999999", #"{"priority": 0.5}"#, 404, "not_found"),
        .bare("POST", "/v1/tasks/999999/resume", 404, "not_found"),
        .bare("POST", "/v1/tasks/999999/suspend", 404, "not_found"),
        .bare("POST", "/v1/tasks/999999/cancel", 404, "not_found"),
        .bare("GET", "/v1/nothing", 404, "not_found"),
        .bare("GET", "/v1", 404, "not_found"),
        .bare("GET", "/nothing", 404, "not_found"),
        .bare("GET", "/v1/sessions/{sid}/nothing", 404, "not_found"),
        .bare("GET", "/v1/tasks/{tid}/nothing", 404, "not_found"),
        .bare("GET", "/v2/sessions", 404, "not_found"),
    ]

    static let methods: [ErrorCase] = [
        .bare("DELETE", "/v1/sessions", 405, "method_not_allowed", allow: ["GET", "POST"]),
        .bare("PUT", "/v1/sessions/{sid}", 405, "method_not_allowed", allow: ["GET"]),
        .bare("PUT", "/v1/tasks/{tid}", 405, "method_not_allowed", allow: ["DELETE", "GET", "PATCH"]),
        .bare("GET", "/v1/tasks/{tid}/cancel", 405, "method_not_allowed", allow: ["POST"]),
        .bare("GET", "/v1/tasks/{tid}/resume", 405, "method_not_allowed", allow: ["POST"]),
        .bare("POST", "/v1/tasks/{tid}/progress", 405, "method_not_allowed", allow: ["GET"]),
        .bare("DELETE", "/v1/tasks/{tid}/body", 405, "method_not_allowed", allow: ["GET"]),
        .bare("GET", "/v1/sessions/{sid}/invalidate", 405, "method_not_allowed", allow: ["POST"]),
        .bare("PUT", "/v1/sessions/{sid}/tasks", 405, "method_not_allowed", allow: ["GET", "POST"]),
        .bare("POST", "/healthz", 405, "method_not_allowed", allow: ["GET"]),
    ]

    static let queries: [ErrorCase] = [
        .bare("GET", "/v1/sessions?limit=0", 400, "invalid_query", field: "limit"),
        .bare("GET", "/v1/sessions?limit=1001", 400, "invalid_query", field: "limit"),
        .bare("GET", "/v1/sessions?limit=abc", 400, "invalid_query", field: "limit"),
        .bare("GET", "/v1/sessions?limit=-1", 400, "invalid_query", field: "limit"),
        .bare("GET", "/v1/sessions?cursor=bogus", 400, "invalid_query", field: "cursor"),
        .bare("GET", "/v1/sessions/{sid}/tasks?state=bogus", 400, "invalid_query", field: "state"),
        .bare("GET", "/v1/sessions/{sid}/tasks?limit=0", 400, "invalid_query", field: "limit"),
        .bare("GET", "/v1/sessions/{sid}/tasks?cursor=abc", 400, "invalid_query", field: "cursor"),
        .bare("GET", "/v1/tasks/{tid}/progress?after=-1", 400, "invalid_query", field: "after"),
        .bare("GET", "/v1/tasks/{tid}/progress?after=abc", 400, "invalid_query", field: "after"),
        .bare("GET", "/v1/tasks/{tid}/progress?after=1.5", 400, "invalid_query", field: "after"),
        .bare("GET", "/v1/tasks/{tid}/progress?wait=abc", 400, "invalid_query", field: "wait"),
        .bare("GET", "/v1/tasks/{tid}/progress?wait=-1", 400, "invalid_query", field: "wait"),
        .bare("GET", "/v1/tasks/{tid}/progress?wait=nan", 400, "invalid_query", field: "wait"),
        .bare("GET", "/v1/tasks/{tid}/progress?wait=inf", 400, "invalid_query", field: "wait"),
        .bare("GET", "/v1/sessions/{sid}/events?after=-1", 400, "invalid_query", field: "after"),
        .bare("GET", "/v1/sessions/{sid}/events?wait=abc", 400, "invalid_query", field: "wait"),
        .bare("GET", "/v1/sessions/{sid}/events?limit=0", 400, "invalid_query", field: "limit"),
        .bare("GET", "/v1/sessions/{sid}/events?types=didCompleteWithErrors", 400, "invalid_query", field: "types"),
        .bare("GET", "/v1/sessions/{sid}/events?types=didWriteData,,didCompleteWithError", 400, "invalid_query", field: "types"),
    ]

    static let conflicts: [ErrorCase] = [
        .bare("POST", "/v1/tasks/{done}/resume", 409, "task_completed"),
        .bare("POST", "/v1/tasks/{done}/suspend", 409, "task_completed"),
        .bare("POST", "/v1/tasks/{done}/cancel", 409, "task_completed"),
        .json("POST", "/v1/tasks/{done}/cancel", #"{"produceResumeData": true}"#, 409, "task_completed"),
        .bare("POST", "/v1/sessions/shared/invalidate", 409, "shared_session"),
        .bare("GET", "/v1/tasks/{tid}/body", 409, "task_not_completed"),
        .bare("GET", "/v1/tasks/{done}/body", 409, "no_body"),
    ]

    // MARK: The table's daemon

    /// What the error cases refer to, and the state they must leave untouched.
    struct Scene {
        let session: String
        let suspended: Int
        let completed: Int

        func resolve(_ path: String) -> String {
            path.replacingOccurrences(of: "{sid}", with: session)
                .replacingOccurrences(of: "{tid}", with: String(suspended))
                .replacingOccurrences(of: "{done}", with: String(completed))
        }
    }

    static func configure(_ configuration: inout DaemonConfiguration) {
        configuration.maxRequestBodySize = 4096
    }

    static func makeScene(_ daemon: DaemonFixture) async throws -> Scene {
        let session = try #require(try await daemon.createSession(["description": "must survive the table", "configuration": ["timeoutIntervalForRequest": 5]]).string("id"))
        _ = try await daemon.createSession(["kind": "background", "identifier": "com.example.table"])
        let suspended = try #require(try await daemon.dataTask(in: session, ["url": "http://127.0.0.1:9/held"], extra: ["state": "suspended", "description": "held"]).int("id"))
        let completed = try #require(try await daemon.dataTask(in: session, ["url": "gopher://127.0.0.1/done"]).int("id"))
        _ = try await daemon.waitForCompletion(completed)
        return Scene(session: session, suspended: suspended, completed: completed)
    }

    /// The stored state as the API shows it, byte for byte (the encoder sorts keys).
    static func snapshot(_ daemon: DaemonFixture, _ scene: Scene) async throws -> [Data] {
        var parts: [Data] = []
        for path in ["/v1/sessions", "/v1/sessions/\(scene.session)/tasks", "/v1/sessions/\(scene.session)/events",
                     "/v1/tasks/\(scene.suspended)", "/v1/tasks/\(scene.completed)", "/v1/sessions/shared"] {
            let response = try await daemon.get(path)
            try #require(response.status == 200, "\(path): \(response)")
            parts.append(response.body)
        }
        return parts
    }

    /// Sends one case and checks the status, the error body's shape, code, field and Allow.
    static func check(_ errorCase: ErrorCase, _ daemon: DaemonFixture, _ scene: Scene) async throws {
        var headers: [String: String] = [:]
        if let contentType = errorCase.contentType { headers["Content-Type"] = contentType }
        let response = try await daemon.request(
            errorCase.method, scene.resolve(errorCase.path),
            body: errorCase.body.map { Data($0.utf8) }, headers: headers, timeout: 10)
        #expect(response.status == errorCase.status, "\(errorCase.testDescription): got \(response)")
        #expect(response.header("Content-Type") == "application/json", "\(errorCase.testDescription)")
        let object = try response.object()
        #expect(Set(object.keys) == ["error"], "\(errorCase.testDescription): \(response)")
        let error = try #require(object.object("error"), "\(errorCase.testDescription): \(response)")
        #expect(Set(error.keys).isSubset(of: ["code", "message", "field"]), "\(error)")
        #expect(error.string("code") == errorCase.code, "\(errorCase.testDescription): got \(response)")
        #expect((error.string("message") ?? "").count > 3, "\(errorCase.testDescription): message \(error["message"] ?? "nil")")
        if let field = errorCase.field {
            #expect(error.string("field") == field, "\(errorCase.testDescription): got \(response)")
        } else {
            #expect(error["field"] == nil, "\(errorCase.testDescription): unexpected field in \(response)")
        }
        if let allow = errorCase.allow {
            let header = response.header("Allow") ?? ""
            let methods = Set(header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(methods == allow, "\(errorCase.testDescription): Allow: \(header)")
        }
        if errorCase.status == 401 {
            #expect(response.header("WWW-Authenticate") == "Bearer")
        }
    }

    // MARK: Tests

    /// Each case on a daemon of its own, whose stored state must be unchanged after it.
    @Test(arguments: cases)
    func errorCase(_ errorCase: ErrorCase) async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let scene = try await Self.makeScene(daemon)
            let before = try await Self.snapshot(daemon, scene)
            try await Self.check(errorCase, daemon, scene)
            #expect(try await daemon.get("/healthz").status == 200)
            let after = try await Self.snapshot(daemon, scene)
            #expect(after == before, "\(errorCase.testDescription) changed the stored state")
        }
    }

    /// The whole table against one daemon, then raw garbage over sockets: the daemon still
    /// answers and everything stored before is unchanged.
    @Test func wholeTableThenGarbageLeaveTheDaemonIntact() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let scene = try await Self.makeScene(daemon)
            let before = try await Self.snapshot(daemon, scene)
            for errorCase in Self.cases {
                try await Self.check(errorCase, daemon, scene)
            }
            #expect(try await daemon.get("/healthz").status == 200)
            #expect(try await Self.snapshot(daemon, scene) == before)

            // All at once, each on a thread of its own: an incomplete request is held until the timeout.
            let port = daemon.port
            let answers = try await withThrowingTaskGroup(of: Data.self) { group in
                for garbage in Self.garbage {
                    group.addTask { try await onThread { try TestHTTPClient.raw(port: port, bytes: garbage, timeout: 2) } }
                }
                return try await group.reduce(into: [Data]()) { $0.append($1) }
            }
            for answer in answers where !answer.isEmpty {
                let text = String(decoding: answer.prefix(12), as: UTF8.self)
                // A client error, or 505 for an HTTP version the server does not speak.
                #expect(text.hasPrefix("HTTP/1.1 4") || text.hasPrefix("HTTP/1.0 4") || text.hasPrefix("HTTP/1.1 505"), "garbage got \(text)")
            }
            let health = try await daemon.request("GET", "/healthz", client: daemon.newClient())
            #expect(health.status == 200)
            #expect(try health.object().string("status") == "ok")
            #expect(try await daemon.get("/readyz").status == 200)
            #expect(try await Self.snapshot(daemon, scene) == before)
            // And it still does real work.
            let id = try #require(try await daemon.dataTask(in: scene.session, ["url": "gopher://127.0.0.1/after"]).int("id"))
            #expect(try await daemon.waitForCompletion(id).value(at: "error.code") as? Int == -1002)
        }
    }

    static let garbage: [Data] = [
        Data("GARBAGE\r\n\r\n".utf8),
        Data(count: 512) { UInt8(truncatingIfNeeded: $0 &* 131) },
        Data("GET /v1/sessions HTTP/9.9\r\nHost: x\r\n\r\n".utf8),
        Data("GET /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".utf8),
        Data("POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"kind\":".utf8),
        Data("POST /v1/sessions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n".utf8),
        Data(("GET /" + String(repeating: "a", count: 70_000) + " HTTP/1.1\r\nHost: x\r\n\r\n").utf8),
        Data(("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 70_000) + "\r\n\r\n").utf8),
        Data("GET /v1/sessions HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n".utf8),
        Data("\r\n\r\n\r\n".utf8),
        Data("GET /v1/sess".utf8),
    ]

    /// A chunked body (no Content-Length) that outgrows the limit is refused too.
    /// A store that cannot be read now (its PostgreSQL server down) is a 503 to retry, neither
    /// a 500 (our bug) nor a 404 (the row may exist); a commit that failed stays 503 or 507.
    @Test func aStoreThatCannotBeReadIsA503ToRetry() {
        let read = APIError.from(StoreReadFailure(reason: "PostgreSQL connection: server closed the connection unexpectedly"))
        #expect(read.status == 503 && read.code == "store_unavailable")
        #expect(read.message.contains("server closed the connection") && read.message.contains("retry later"))
        #expect(APIError.from(StoreFailure(kind: .diskFull, reason: "full")).status == 507)
    }

    @Test func oversizedChunkedBodyIsRefused() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let json = Data((#"{"description": ""# + String(repeating: "y", count: 6000) + #""}"#).utf8)
            var chunked = Data()
            for start in stride(from: 0, to: json.count, by: 1000) {
                let piece = json[start..<min(start + 1000, json.count)]
                chunked.append(Data("\(String(piece.count, radix: 16))\r\n".utf8) + piece + Data("\r\n".utf8))
            }
            chunked.append(Data("0\r\n\r\n".utf8))
            let response = try await daemon.request("POST", "/v1/sessions", body: chunked,
                                                    headers: ["Content-Type": "application/json", "Transfer-Encoding": "chunked"])
            #expect(response.status == 413, "\(response)")
            #expect(response.errorCode == "payload_too_large")
            #expect(try await daemon.get("/v1/sessions").object()["items"].map { ($0 as? [Any])?.count } == 1)
        }
    }

    /// `application/json` with parameters is JSON too.
    @Test func jsonWithCharsetIsAccepted() async throws {
        try await DaemonFixture.with { daemon in
            let response = try await daemon.request("POST", "/v1/sessions", body: Data(#"{"description": "ünïcode"}"#.utf8),
                                                    headers: ["Content-Type": "Application/JSON; charset=utf-8"])
            #expect(response.status == 201, "\(response)")
            #expect(try response.object().string("description") == "ünïcode")
        }
    }

    /// A request whose framing two HTTP parsers could read two ways (two Content-Lengths, or
    /// Content-Length with Transfer-Encoding: request smuggling through a proxy), or a transfer
    /// coding that cannot be read (the connection was held until its timeout): a JSON error at
    /// once, the connection closed so that nothing after it is read as a request, and nothing
    /// stored.
    @Test func ambiguousFramingIsRefusedAndTheConnectionClosed() async throws {
        try await DaemonFixture.with { daemon in
            let body = #"{"description":"smuggled"}"#
            let next = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
            let cases: [(head: String, body: String, status: Int, code: String)] = [
                ("Content-Length: \(body.utf8.count)\r\nContent-Length: 3", body, 400, "malformed_request"),
                ("Content-Length: \(body.utf8.count)\r\nContent-Length: \(body.utf8.count)", body, 400, "malformed_request"),
                ("Content-Length: 3\r\nTransfer-Encoding: chunked", "\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n", 400, "malformed_request"),
                ("Transfer-Encoding: gzip, chunked", "\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n", 501, "not_implemented"),
                ("Transfer-Encoding: foo", body, 501, "not_implemented"),
            ]
            let port = daemon.port
            for (head, payload, status, code) in cases {
                let request = "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(head)\r\n\r\n\(payload)\(next)"
                let started = ContinuousClock.now
                let answer = try await onThread { try TestHTTPClient.raw(port: port, bytes: Data(request.utf8), timeout: 5) }
                let text = String(decoding: answer, as: UTF8.self)
                #expect(ContinuousClock.now - started < .seconds(4), "\(head): the connection was held open")
                #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(head): \(text)")
                #expect(text.contains(#""code":"\#(code)""#), "\(head): \(text)")
                #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "\(head): one answer, nothing after it read: \(text)")
            }
            let listed = try await daemon.get("/v1/sessions").object()
            #expect(!"\(listed)".contains("smuggled"), "\(listed)")
        }
    }

    /// What `curl -d '{...}'` sends: JSON labelled application/x-www-form-urlencoded. An object
    /// or array is read as JSON (its errors are JSON errors); a real form is still a 415.
    @Test func jsonSentAsAFormIsReadAsJSON() async throws {
        try await DaemonFixture.with { daemon in
            let form = ["Content-Type": "application/x-www-form-urlencoded"]
            let session = try await daemon.request("POST", "/v1/sessions", body: Data(#" {"description": "from curl -d"}"#.utf8), headers: form)
            #expect(session.status == 201, "\(session)")
            #expect(try session.object().string("description") == "from curl -d")
            let task = try await daemon.request("POST", "/v1/sessions/shared/tasks",
                                                body: Data(#"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"state":"suspended"}"#.utf8), headers: form)
            #expect(task.status == 201, "\(task)")
            let batch = try await daemon.request("POST", "/v1/sessions/shared/tasks:batch",
                                                 body: Data(#"{"tasks":[{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"state":"suspended"}]}"#.utf8), headers: form)
            #expect(batch.status == 201, "\(batch)")
            let broken = try await daemon.request("POST", "/v1/sessions", body: Data(#"{"description": "#.utf8), headers: form)
            #expect(broken.status == 400 && broken.errorCode == "malformed_json", "\(broken)")
            let realForm = try await daemon.request("POST", "/v1/sessions", body: Data("description=x".utf8), headers: form)
            #expect(realForm.status == 415 && realForm.errorCode == "unsupported_media_type")
        }
    }
}
