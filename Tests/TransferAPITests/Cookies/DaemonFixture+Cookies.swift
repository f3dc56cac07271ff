import Foundation
import Testing

/// Cookie helpers for the daemon fixture: the cookie routes, and what httpbin's /cookies saw.
extension DaemonFixture {
    /// GET /v1/sessions/{sid}/cookies (optionally ?url=): name -> value (expects 200).
    func jar(_ session: String, url: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        var path = "/v1/sessions/\(session)/cookies"
        if let url { path += "?url=" + (url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url) }
        let response = try await get(path)
        try #require(response.status == 200, "cookies of \(session): \(response)", sourceLocation: sourceLocation)
        return try #require(try response.object()["cookies"] as? [[String: Any]], sourceLocation: sourceLocation)
    }

    func jarNames(_ session: String, url: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        try await jar(session, url: url, sourceLocation: sourceLocation).compactMap { $0.string("name") }
    }

    /// PUT /v1/sessions/{sid}/cookies with these cookies.
    func putCookies(_ session: String, _ cookies: [[String: Any]]) async throws -> APIResponse {
        try await request("PUT", "/v1/sessions/\(session)/cookies", json: ["cookies": cookies])
    }

    /// Runs a data task (a RequestSpec) to completion and returns its body as JSON.
    func fetchJSON(in session: String, _ request: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let id = try #require(try await dataTask(in: session, request, sourceLocation: sourceLocation).int("id"), sourceLocation: sourceLocation)
        let task = try await waitForCompletion(id, sourceLocation: sourceLocation)
        try #require(task.isNull("error"), "\(request["url"] ?? ""): \(task["error"] ?? "")", sourceLocation: sourceLocation)
        return try await body(id).object()
    }

    /// The cookies httpbin received on the request's last hop (its /cookies answer).
    func cookiesSeen(in session: String, _ request: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: String] {
        let answer = try await fetchJSON(in: session, request, sourceLocation: sourceLocation)
        return try #require(answer["cookies"] as? [String: String], "not a /cookies answer: \(answer)", sourceLocation: sourceLocation)
    }
}
