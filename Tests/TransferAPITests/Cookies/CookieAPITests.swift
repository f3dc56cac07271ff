import Foundation
import Testing
import TransferAPI

/// GET, PUT and DELETE /v1/sessions/{sid}/cookies on the real daemon: adding, listing (with the
/// url filter), deleting some and all, and bad input refused with the jar left as it was.
@Suite struct CookieAPITests {
    static let inAnHour = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))

    static var sample: [[String: Any]] { [
        ["name": "host", "value": "1", "domain": "www.example.com"],
        ["name": "wide", "value": "2", "domain": ".example.com", "path": "/", "expiresDate": inAnHour, "sameSitePolicy": "lax"],
        ["name": "deep", "value": "3", "domain": ".example.com", "path": "/docs", "isHTTPOnly": true],
        ["name": "safe", "value": "4", "domain": "www.example.com", "isSecure": true, "expiresDate": NSNull()],
    ] }

    @Test func addListFilterByURLAndReplace() async throws {
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let put = try await daemon.putCookies(session, Self.sample)
            #expect(put.status == 200, "\(put)")
            #expect(try put.object()["cookies"] as? [Any] != nil)

            let all = try await daemon.jar(session)
            #expect(Set(all.compactMap { $0.string("name") }) == ["host", "wide", "deep", "safe"])
            let wide = try #require(all.first { $0.string("name") == "wide" })
            #expect(wide.string("domain") == ".example.com" && wide.bool("isSessionOnly") == false && wide.string("sameSitePolicy") == "lax")
            #expect(parseTimestamp(wide["expiresDate"]) != nil)
            let host = try #require(all.first { $0.string("name") == "host" })
            #expect(host.string("domain") == "www.example.com" && host.isNull("expiresDate") && host.bool("isSessionOnly") == true)
            #expect(host.isNull("sameSitePolicy") && host.string("path") == "/")

            // What a request to the URL would carry, in Cookie-header order (longer paths first).
            #expect(try await daemon.jarNames(session, url: "https://www.example.com/docs/a") == ["deep", "host", "safe", "wide"])
            #expect(try await daemon.jarNames(session, url: "http://www.example.com/docs/a") == ["deep", "host", "wide"])
            #expect(try await daemon.jarNames(session, url: "http://api.example.com/") == ["wide"])
            #expect(try await daemon.jarNames(session, url: "http://example.org/").isEmpty)

            // Same name, domain and path: replaced.
            #expect(try await daemon.putCookies(session, [["name": "host", "value": "new", "domain": "www.example.com"]]).status == 200)
            let replaced = try await daemon.jar(session).filter { $0.string("name") == "host" }
            #expect(replaced.count == 1 && replaced.first?.string("value") == "new")
            // An expiry in the past deletes.
            #expect(try await daemon.putCookies(session, [["name": "host", "value": "x", "domain": "www.example.com", "expiresDate": "2001-01-01T00:00:00Z"]]).status == 200)
            #expect(!(try await daemon.jarNames(session)).contains("host"))
        }
    }

    @Test func deleteSomeByFilterOrURLThenAll() async throws {
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            #expect(try await daemon.putCookies(session, Self.sample).status == 200)

            func delete(_ query: String) async throws -> Int? {
                let response = try await daemon.request("DELETE", "/v1/sessions/\(session)/cookies\(query)")
                #expect(response.status == 200, "\(response)")
                return try response.object().int("deleted")
            }
            #expect(try await delete("?name=deep") == 1)
            #expect(try await delete("?domain=.example.com") == 1)  // wide; "host" is host-only
            #expect(Set(try await daemon.jarNames(session)) == ["host", "safe"])
            #expect(try await delete("?url=http%3A%2F%2Fwww.example.com%2F") == 1)  // host; safe needs https
            #expect(try await daemon.jarNames(session) == ["safe"])
            #expect(try await delete("?name=nothing") == 0)
            #expect(try await delete("") == 1)
            #expect(try await daemon.jar(session).isEmpty)
        }
    }

    @Test func defaultSessionsActOnTheSharedJarEphemeralOnesOnTheirOwn() async throws {
        try await DaemonFixture.with { daemon in
            let first = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            let second = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            let ephemeral = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            #expect(try await daemon.putCookies(first, [["name": "d", "value": "1", "domain": "example.com"]]).status == 200)
            #expect(try await daemon.putCookies(ephemeral, [["name": "e", "value": "1", "domain": "example.com"]]).status == 200)
            #expect(try await daemon.jarNames(second) == ["d"])
            #expect(try await daemon.jarNames("shared") == ["d"])
            #expect(try await daemon.jarNames(ephemeral) == ["e"])
            #expect(try await daemon.request("DELETE", "/v1/sessions/\(second)/cookies").status == 200)
            #expect(try await daemon.jar(first).isEmpty)
            #expect(try await daemon.jarNames(ephemeral) == ["e"])
        }
    }

    struct BadInput: Sendable, CustomStringConvertible {
        let cookie: [String: String]
        let status: Int
        let code: String
        let field: String?
        var description: String { "\(cookie) -> \(status) \(code)" }
    }

    static let badInputs: [BadInput] = [
        BadInput(cookie: ["value": "1", "domain": "example.com"], status: 400, code: "missing_field", field: "cookies[0].name"),
        BadInput(cookie: ["name": "a b", "value": "1", "domain": "example.com"], status: 422, code: "invalid_value", field: "cookies[0].name"),
        BadInput(cookie: ["name": "a", "value": "1;2", "domain": "example.com"], status: 422, code: "invalid_value", field: "cookies[0].value"),
        BadInput(cookie: ["name": "a", "value": "1", "domain": "exa mple.com"], status: 422, code: "invalid_value", field: "cookies[0].domain"),
        BadInput(cookie: ["name": "a", "value": "1", "domain": ".co.uk"], status: 422, code: "invalid_value", field: "cookies[0].domain"),
        BadInput(cookie: ["name": "a", "value": "1", "domain": ".com"], status: 422, code: "invalid_value", field: "cookies[0].domain"),
        BadInput(cookie: ["name": "a", "value": "1", "domain": "example.com", "path": "docs"], status: 422, code: "invalid_value", field: "cookies[0].path"),
        BadInput(cookie: ["name": "a", "value": "1", "domain": "example.com", "expiresDate": "tomorrow"], status: 422, code: "invalid_value", field: "cookies[0].expiresDate"),
        BadInput(cookie: ["name": "a", "value": "1", "domain": "example.com", "sameSitePolicy": "sometimes"], status: 422, code: "invalid_value", field: "cookies[0].sameSitePolicy"),
        BadInput(cookie: ["name": "__Host-a", "value": "1", "domain": "example.com"], status: 422, code: "invalid_value", field: "cookies[0].isSecure"),
        BadInput(cookie: ["name": "a", "value": "1", "domain": "example.com", "colour": "red"], status: 400, code: "unknown_field", field: "cookies[0].colour"),
    ]

    @Test(arguments: badInputs)
    func badCookiesAreRefusedAndTheJarIsUnchanged(_ bad: BadInput) async throws {
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            #expect(try await daemon.putCookies(session, [["name": "keep", "value": "k", "domain": "example.com"]]).status == 200)
            // The good cookie before the bad one is not stored either: all or nothing.
            let response = try await daemon.putCookies(session, [bad.cookie])
            #expect(response.status == bad.status, "\(response)")
            #expect(response.errorCode == bad.code)
            #expect(response.error?.string("field") == bad.field)
            let both = try await daemon.putCookies(session, [["name": "good", "value": "g", "domain": "example.com"], bad.cookie])
            #expect(both.status == bad.status)
            #expect(try await daemon.jarNames(session) == ["keep"])
        }
    }

    @Test func badQueriesAndUnknownSessions() async throws {
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            #expect(try await daemon.putCookies(session, [["name": "keep", "value": "k", "domain": "example.com"]]).status == 200)
            for path in ["cookies?url=not%20a%20url", "cookies?url=ftp%3A%2F%2Fexample.com%2F"] {
                let response = try await daemon.get("/v1/sessions/\(session)/\(path)")
                #expect(response.status == 400 && response.errorCode == "invalid_query" && response.error?.string("field") == "url", "\(response)")
            }
            let mixed = try await daemon.request("DELETE", "/v1/sessions/\(session)/cookies?url=http%3A%2F%2Fexample.com%2F&name=keep")
            #expect(mixed.status == 400 && mixed.errorCode == "invalid_query")
            let badURL = try await daemon.request("DELETE", "/v1/sessions/\(session)/cookies?url=nope")
            #expect(badURL.status == 400 && badURL.error?.string("field") == "url")
            #expect(try await daemon.request("PUT", "/v1/sessions/\(session)/cookies", body: Data("{\"cookies\": [".utf8), headers: ["Content-Type": "application/json"]).status == 400)
            #expect(try await daemon.request("PUT", "/v1/sessions/\(session)/cookies", json: [:]).errorCode == "missing_field")
            #expect(try await daemon.jarNames(session) == ["keep"])
            for method in ["GET", "PUT", "DELETE"] {
                let response = try await daemon.request(method, "/v1/sessions/no-such-session/cookies", json: method == "PUT" ? ["cookies": []] : nil)
                #expect(response.status == 404, "\(method): \(response)")
            }
        }
    }

    @Test func anInvalidatedEphemeralSessionsJarIsDroppedAndCannotBeFilled() async throws {
        try await DaemonFixture.with { daemon in
            let session = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            #expect(try await daemon.putCookies(session, [["name": "gone", "value": "1", "domain": "example.com"]]).status == 200)
            #expect(try await daemon.post("/v1/sessions/\(session)/invalidate", json: [:]).status == 200)
            _ = try await daemon.waitForEvent(session) { $0.string("type") == "didBecomeInvalid" }
            #expect(try await daemon.jar(session).isEmpty, "the invalidated ephemeral session's jar was dropped")
            let response = try await daemon.putCookies(session, [["name": "late", "value": "1", "domain": "example.com"]])
            #expect(response.status == 409 && response.errorCode == "session_invalidated", "\(response)")
        }
    }

    @Test func eachTokenHasItsOwnSharedJarTheSharedSessionIncluded() async throws {
        let (alpha, beta) = ("token-alpha-0123456789", "token-beta-9876543210")
        try await DaemonFixture.with(configure: { $0.tokens = [alpha, beta] }, token: alpha) { daemon in
            let mine = try #require(try await daemon.createSession(["kind": "default"]).string("id"))
            #expect(try await daemon.request("PUT", "/v1/sessions/shared/cookies", json: ["cookies": [["name": "a", "value": "1", "domain": "example.com"]]]).status == 200)
            #expect(try await daemon.jarNames(mine) == ["a"], "a token's default sessions and its use of `shared` share one jar")
            let theirs = try await daemon.request("GET", "/v1/sessions/shared/cookies", token: .some(beta))
            #expect(theirs.status == 200)
            #expect((try theirs.object()["cookies"] as? [Any])?.isEmpty == true, "\(theirs)")
            #expect(try await daemon.request("GET", "/v1/sessions/\(mine)/cookies", token: .some(beta)).status == 404)
        }
    }
}
