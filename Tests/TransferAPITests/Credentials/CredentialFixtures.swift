import Foundation
import Testing
import TestSupport

/// Helpers shared by the credential tests: storing a credential through the API, and an origin
/// that asks for Basic credentials per path and realm.
extension DaemonFixture {
    /// PUT /v1/sessions/{sid}/credentials; expects 200.
    @discardableResult
    func putCredential(in session: String, host: String = "127.0.0.1", port: Int, realm: String?, method: String = "default",
                       user: String, password: String, persistence: String,
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let response = try await request("PUT", "/v1/sessions/\(session)/credentials", json: [
            "protectionSpace": ["host": host, "port": port, "protocol": "http", "realm": realm ?? NSNull(), "authenticationMethod": method] as [String: Any],
            "user": user, "password": password, "persistence": persistence,
        ])
        try #require(response.status == 200, "put credential: \(response)", sourceLocation: sourceLocation)
        return try response.object()
    }

    /// The users of GET /v1/sessions/{sid}/credentials, sorted.
    func credentialUsers(in session: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        let response = try await get("/v1/sessions/\(session)/credentials")
        try #require(response.status == 200, "list credentials: \(response)", sourceLocation: sourceLocation)
        return ((try response.object()["items"] as? [[String: Any]]) ?? []).compactMap { $0.string("user") }.sorted()
    }

    /// The events of one task, in feed order.
    func events(of task: Int, in session: String) async throws -> [[String: Any]] {
        try await allEvents(session).filter { $0.int("taskId") == task }
    }
}

/// An origin whose paths each want one Basic credential of one realm: a request without it gets
/// 401 with `WWW-Authenticate: Basic realm="..."`, one with it gets 200 "hello USER". Every
/// request is recorded (`OriginServer.requests`) with the headers it carried.
enum BasicProtectedOrigin {
    struct Guard: Sendable {
        let realm: String
        let user: String
        let password: String
        /// Answered once authorised (default: 200 "hello USER").
        var then: OriginBehavior? = nil
    }

    static func start(_ guards: [String: Guard]) throws -> OriginServer {
        try OriginServer { request in
            guard let rule = guards[request.pathWithoutQuery] else { return .text("open \(request.path)") }
            let expected = "Basic " + Data("\(rule.user):\(rule.password)".utf8).base64EncodedString()
            guard request.header("Authorization") == expected else {
                return .text("who are you?", status: 401, headers: ["WWW-Authenticate": "Basic realm=\"\(rule.realm)\", charset=\"UTF-8\""])
            }
            return rule.then ?? .text("hello \(rule.user)")
        }
    }
}
