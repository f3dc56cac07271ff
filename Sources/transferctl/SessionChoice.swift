/// Which session `get`, `post`, `put` and `resume-from` create their task in: the one `--session`
/// names, else transferctl's own (an active default session described "transferctl", reused
/// from run to run, created the first time).
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
}
