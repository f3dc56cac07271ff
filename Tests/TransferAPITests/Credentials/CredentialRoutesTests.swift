import Foundation
import Testing
import TestSupport

/// GET, PUT and DELETE /v1/sessions/{sid}/credentials: validation with the field named, write-only
/// passwords, filters, pagination, and what invalidation leaves.
@Suite struct CredentialRoutesTests {
    static func body(realm: Any = "R", password: Any = "pw", user: Any = "u", persistence: Any = "forSession", host: Any = "example.org",
                     port: Any = 8080, proto: Any = "http", method: Any = "HTTPBasic") -> [String: Any] {
        ["protectionSpace": ["host": host, "port": port, "protocol": proto, "realm": realm, "authenticationMethod": method] as [String: Any],
         "user": user, "password": password, "persistence": persistence]
    }

    @Test func aStoredCredentialIsListedWithoutItsPassword() async throws {
        let password = "never-shown-\(UUID().uuidString)"
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let put = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: Self.body(password: password, host: "Example.ORG"))
            #expect(put.status == 200, "\(put)")
            #expect(!put.text.contains(password))
            let item = try put.object()
            #expect(item.value(at: "protectionSpace.host") as? String == "example.org")
            #expect(item.value(at: "protectionSpace.port") as? Int == 8080)
            #expect(item.value(at: "protectionSpace.authenticationMethod") as? String == "HTTPBasic")
            #expect(item.string("persistence") == "forSession")
            #expect(item["password"] == nil)

            let list = try await daemon.get("/v1/sessions/\(sid)/credentials")
            #expect(list.status == 200)
            #expect(!list.text.contains(password) && !list.text.contains("password"), "\(list)")
            let items = try #require(try list.object()["items"] as? [[String: Any]])
            #expect(items.count == 1 && items[0].string("user") == "u")
            #expect(try list.object()["next"] is NSNull)

            // Defaults: the protocol's port, no realm, any method, forSession.
            let minimal = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: [
                "protectionSpace": ["host": "example.org", "protocol": "https"], "user": "m", "password": "x",
            ])
            #expect(minimal.status == 200, "\(minimal)")
            let defaults = try minimal.object()
            #expect(defaults.value(at: "protectionSpace.port") as? Int == 443)
            #expect(defaults.value(at: "protectionSpace.realm") is NSNull)
            #expect(defaults.value(at: "protectionSpace.authenticationMethod") as? String == "default")
            #expect(defaults.string("persistence") == "forSession")

            // The same space and user is replaced, not added.
            _ = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: Self.body(password: "new", persistence: "permanent"))
            let again = try #require(try await daemon.get("/v1/sessions/\(sid)/credentials").object()["items"] as? [[String: Any]])
            #expect(again.count == 2)
            #expect(again.first { $0.string("user") == "u" }?.string("persistence") == "permanent")

            let page = try await daemon.get("/v1/sessions/\(sid)/credentials?limit=1").object()
            #expect((page["items"] as? [Any])?.count == 1)
            let next = try #require(page.string("next"))
            let rest = try await daemon.get("/v1/sessions/\(sid)/credentials?limit=1&cursor=\(next)").object()
            #expect((rest["items"] as? [Any])?.count == 1 && rest["next"] is NSNull)
        }
    }

    /// One bad value: the key it replaces (in protectionSpace or at the top), as JSON text.
    static let badInputs: [(key: String, json: String, status: Int, field: String)] = [
        ("host", #""http://example.org""#, 422, "protectionSpace.host"),
        ("host", #""""#, 422, "protectionSpace.host"),
        ("port", "70000", 422, "protectionSpace.port"),
        ("port", "1.5", 422, "protectionSpace.port"),
        ("protocol", #""gopher""#, 422, "protectionSpace.protocol"),
        ("authenticationMethod", #""NTLM""#, 422, "protectionSpace.authenticationMethod"),
        ("realm", "7", 400, "protectionSpace.realm"),
        ("user", #""a:b""#, 422, "user"),
        ("user", #""""#, 422, "user"),
        ("password", #""line\nbreak-SECRET""#, 422, "password"),
        ("password", "\"" + String(repeating: "S", count: 1025) + "\"", 422, "password"),
        ("password", "12345", 400, "password"),
        ("persistence", #""forever""#, 422, "persistence"),
    ]

    @Test(arguments: badInputs)
    func badInputNamesTheFieldAndNeverEchoesThePassword(_ input: (key: String, json: String, status: Int, field: String)) async throws {
        var body = Self.body()
        let value = try JSONSerialization.jsonObject(with: Data(input.json.utf8), options: [.fragmentsAllowed])
        if input.field.hasPrefix("protectionSpace.") {
            var space = try #require(body["protectionSpace"] as? [String: Any])
            space[input.key] = value
            body["protectionSpace"] = space
        } else {
            body[input.key] = value
        }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let response = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: body)
            #expect(response.status == input.status, "\(response)")
            #expect(response.error?.string("field") == input.field, "\(response)")
            #expect(!response.text.contains("SECRET") && !response.text.contains("SSSS"))
            #expect(try await daemon.credentialUsers(in: sid).isEmpty, "a refused credential was stored")
        }
    }

    @Test func missingAndUnknownFieldsUnknownSessionsAndInvalidatedOnes() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            var body = Self.body()
            body["password"] = nil
            let missing = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: body)
            #expect(missing.status == 400 && missing.errorCode == "missing_field" && missing.error?.string("field") == "password", "\(missing)")
            body = Self.body()
            body["secret"] = "x"
            let unknown = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: body)
            #expect(unknown.status == 400 && unknown.errorCode == "unknown_field", "\(unknown)")
            #expect(try await daemon.request("PUT", "/v1/sessions/nope/credentials", json: Self.body()).status == 404)
            #expect(try await daemon.get("/v1/sessions/nope/credentials").status == 404)
            #expect(try await daemon.request("DELETE", "/v1/sessions/nope/credentials").status == 404)

            // Invalidation drops the session's own credentials; the shared store stays.
            _ = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: Self.body(user: "own"))
            _ = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: Self.body(user: "shared", persistence: "permanent"))
            #expect(try await daemon.post("/v1/sessions/\(sid)/invalidate").status == 200)
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didBecomeInvalid" }
            #expect(try await daemon.credentialUsers(in: sid) == ["shared"])
            let refused = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: Self.body(user: "late"))
            #expect(refused.status == 409 && refused.errorCode == "session_invalidated", "\(refused)")
        }
    }

    @Test func deleteRemovesWhatTheFiltersMatchAndRefusesUnknownFilters() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            for (user, port, realm) in [("a", 8080, "R"), ("b", 8080, "Q"), ("c", 9090, "R")] {
                _ = try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: Self.body(realm: realm, user: user, port: port))
            }
            let typo = try await daemon.request("DELETE", "/v1/sessions/\(sid)/credentials?hots=example.org")
            #expect(typo.status == 400 && typo.error?.string("field") == "hots", "\(typo)")
            #expect(try await daemon.request("DELETE", "/v1/sessions/\(sid)/credentials?port=x").status == 400)
            #expect(try await daemon.credentialUsers(in: sid) == ["a", "b", "c"])

            let byRealm = try await daemon.request("DELETE", "/v1/sessions/\(sid)/credentials?host=EXAMPLE.org&port=8080&realm=R")
            let deleted = try byRealm.object().int("deleted")
            #expect(byRealm.status == 200 && deleted == 1, "\(byRealm)")
            #expect(try await daemon.credentialUsers(in: sid) == ["b", "c"])
            let byUser = try await daemon.request("DELETE", "/v1/sessions/\(sid)/credentials?user=c&protocol=http")
            #expect(try byUser.object().int("deleted") == 1)
            let all = try await daemon.request("DELETE", "/v1/sessions/\(sid)/credentials")
            #expect(try all.object().int("deleted") == 1)
            #expect(try await daemon.credentialUsers(in: sid).isEmpty)
        }
    }
}
