internal import JSONModel

/// Which session `get`, `post`, `put` and `resume-from` create their task in: the one `--session`
/// names, else transferctl's own (an active default session described "transferctl", reused
/// from run to run, created the first time), or, when the run needs a configuration of its own
/// (`--proxy`, `-k`), a session made for this run and invalidated at its end.
enum SessionChoice {
    static let description = "transferctl"

    static func resolve(_ explicit: String?, client: APIClient) throws -> String {
        if let explicit { return explicit }
        var cursor: String?
        repeat {
            let page = try client.send("GET", "/v1/sessions" + APIClient.query([("limit", "1000"), ("cursor", cursor)]))
                .decode(Page<SessionInfo>.self)
            if let mine = page.items.first(where: { $0.kind == "default" && $0.state == "active" && $0.description == description }) {
                return mine.id
            }
            cursor = page.next
        } while cursor != nil
        return try client.send("POST", "/v1/sessions", json: SessionCreateBody(description: description))
            .decode(SessionInfo.self).id
    }

    /// A session made for one run with `configuration`; `end` invalidates it (cancelling what is
    /// left of its tasks), so runs never leave such sessions behind.
    static func ofItsOwn(_ configuration: [String: JSONValue], client: APIClient) throws -> String {
        try client.send("POST", "/v1/sessions", json: SessionCreateBody(description: description + " (one run)", configuration: configuration))
            .decode(SessionInfo.self).id
    }

    static func end(_ session: String, client: APIClient) {
        _ = try? client.send("POST", APIClient.path("v1", "sessions", session, "invalidate"), json: InvalidateBody(cancelTasks: true))
    }
}

/// `POST /v1/sessions/{sid}/invalidate`.
struct InvalidateBody: Encodable {
    var cancelTasks: Bool
}
