import Foundation
import Testing
import TestSupport

/// URLSession's reset empties what the session kept beside its tasks: its cookies, its cached
/// responses and its credentials (every `SessionScopedStore`), in an ephemeral session (its own)
/// and a default one (the shared stores, as URLSession's shared storages are).
@Suite struct SessionResetStoresTests {
    @Test(arguments: ["ephemeral", "default"])
    func resetEmptiesCookiesCacheAndCredentials(kind: String) async throws {
        let origin = try OriginServer { request in
            .respond(headers: ["Cache-Control": "max-age=600", "Set-Cookie": "seen=\(request.path.dropFirst()); Max-Age=600"], body: Data("cached \(request.path)".utf8))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["kind": kind]).string("id"))
            let url = origin.url("/page")
            let first = try #require(try await daemon.dataTask(in: sid, ["url": url]).int("id"))
            #expect(try await daemon.waitForCompletion(first).isNull("error"))
            let credential: [String: Any] = [
                "protectionSpace": ["host": "127.0.0.1", "port": origin.port, "protocol": "http", "realm": "r"],
                "user": "u", "password": "p", "persistence": kind == "default" ? "permanent" : "forSession",
            ]
            #expect(try await daemon.request("PUT", "/v1/sessions/\(sid)/credentials", json: credential).status == 200)

            // Before: the cookie, the credential, and a second GET answered from the cache.
            let cookies = try await daemon.get("/v1/sessions/\(sid)/cookies").object()["cookies"] as? [[String: Any]]
            #expect(cookies?.count == 1, "the control failed: the cookie was not stored")
            let credentials = try await daemon.get("/v1/sessions/\(sid)/credentials").object()["items"] as? [[String: Any]]
            #expect(credentials?.count == 1, "the control failed: the credential was not stored")
            let cached = try #require(try await daemon.dataTask(in: sid, ["url": url]).int("id"))
            #expect(try await daemon.waitForCompletion(cached).string("cacheStatus") == "cache", "the control failed: no cache hit")
            #expect(origin.requests.count == 1)

            #expect(try await daemon.post("/v1/sessions/\(sid)/reset").status == 200)

            // After: nothing of the three, and the next GET goes to the origin.
            #expect((try await daemon.get("/v1/sessions/\(sid)/cookies").object()["cookies"] as? [[String: Any]])?.isEmpty == true)
            #expect((try await daemon.get("/v1/sessions/\(sid)/credentials").object()["items"] as? [[String: Any]])?.isEmpty == true)
            let after = try #require(try await daemon.dataTask(in: sid, ["url": url]).int("id"))
            #expect(try await daemon.waitForCompletion(after).string("cacheStatus") == "network")
            #expect(origin.requests.count == 2)
            #expect(origin.requests.last?.header("Cookie") == nil, "a cookie was sent after the reset")
        }
    }
}
