import Foundation
import Testing
import TestSupport
import TransferAPI

/// Credential stores with tokens (issue 16, item 2): every store is the token's own, the
/// `shared` session's included. Another token can neither list, delete nor authenticate with a
/// credential; a task of another token against an origin that wants it is not answered with it.
@Suite struct CredentialTenantTests {
    static let alpha = "alpha-token-0123456789"
    static let beta = "beta-token-9876543210"

    private func users(_ daemon: DaemonFixture, in session: String, token: String) async throws -> [String] {
        let response = try await daemon.get("/v1/sessions/\(session)/credentials", token: .some(token))
        try #require(response.status == 200, "\(response)")
        return ((try response.object()["items"] as? [[String: Any]]) ?? []).compactMap { $0.string("user") }.sorted()
    }

    private func put(_ daemon: DaemonFixture, in session: String, port: Int, user: String, password: String, persistence: String, token: String) async throws -> APIResponse {
        try await daemon.request("PUT", "/v1/sessions/\(session)/credentials", json: [
            "protectionSpace": ["host": "127.0.0.1", "port": port, "protocol": "http", "realm": "Vault", "authenticationMethod": "default"] as [String: Any],
            "user": user, "password": password, "persistence": persistence,
        ], token: .some(token))
    }

    /// Runs a data task to `url` as `token` in `session`; returns its status code.
    private func status(_ daemon: DaemonFixture, _ url: String, in session: String, token: String) async throws -> Int? {
        let created = try await daemon.post("/v1/sessions/\(session)/tasks", json: ["kind": "data", "request": ["url": url]], token: .some(token)).object()
        let id = try #require(created.int("id"), "\(created)")
        return try await daemon.waitForCompletion(id, token: .some(token)).value(at: "response.statusCode") as? Int
    }

    @Test func anotherTokenCannotListDeleteOrAuthenticateWithACredential() async throws {
        let origin = try BasicProtectedOrigin.start(["/vault": .init(realm: "Vault", user: "alpha-user", password: "alpha-pass")])
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.tokens = [Self.alpha, Self.beta] }, token: Self.alpha) { daemon in
            // Alpha stores a permanent and a session credential through the shared session,
            // and one in a session of its own.
            for (user, persistence) in [("alpha-user", "permanent"), ("alpha-session", "forSession")] {
                let stored = try await put(daemon, in: "shared", port: origin.port, user: user, password: "alpha-pass", persistence: persistence, token: Self.alpha)
                #expect(stored.status == 200, "\(stored)")
            }
            let own = try #require(try await daemon.post("/v1/sessions", json: [:], token: .some(Self.alpha)).object().string("id"))
            #expect(try await put(daemon, in: own, port: origin.port, user: "alpha-own", password: "x", persistence: "forSession", token: Self.alpha).status == 200)

            // Beta's tasks are not answered with them, it sees none of them and cannot delete them.
            let beforeBeta = origin.requests.count
            #expect(try await status(daemon, origin.url("/vault"), in: "shared", token: Self.beta) == 401, "beta was authenticated with alpha's credential")
            let betaRequests = origin.requests.dropFirst(beforeBeta)
            #expect(!betaRequests.isEmpty && betaRequests.allSatisfy { $0.header("Authorization") == nil }, "alpha's credential was sent for beta")
            #expect(try await users(daemon, in: "shared", token: Self.beta).isEmpty)
            let deleted = try await daemon.request("DELETE", "/v1/sessions/shared/credentials", token: .some(Self.beta))
            #expect(deleted.status == 200, "\(deleted)")
            #expect(try deleted.object().int("deleted") == 0)
            let reset = try await daemon.post("/v1/sessions/shared/reset", token: .some(Self.beta))
            #expect(reset.status == 200 || reset.status == 204, "\(reset)")
            for (method, path) in [("GET", "/v1/sessions/\(own)/credentials"), ("DELETE", "/v1/sessions/\(own)/credentials")] {
                #expect(try await daemon.request(method, path, token: .some(Self.beta)).status == 404, "\(method) \(path)")
            }
            #expect(try await put(daemon, in: own, port: origin.port, user: "beta", password: "y", persistence: "permanent", token: Self.beta).status == 404)
            let inAlphasSession = try await daemon.post("/v1/sessions/\(own)/tasks", json: ["kind": "data", "request": ["url": origin.url("/vault")]], token: .some(Self.beta))
            #expect(inAlphasSession.status == 404, "beta ran a task in alpha's session: \(inAlphasSession)")
            // Beta's own permanent credential in the shared session does not reach alpha's list.
            #expect(try await put(daemon, in: "shared", port: origin.port, user: "beta-user", password: "wrong", persistence: "permanent", token: Self.beta).status == 200)
            #expect(try await users(daemon, in: "shared", token: Self.beta) == ["beta-user"])

            // Alpha's are all still there and still used.
            #expect(try await users(daemon, in: "shared", token: Self.alpha) == ["alpha-session", "alpha-user"])
            #expect(try await users(daemon, in: own, token: Self.alpha) == ["alpha-own", "alpha-user"])
            #expect(try await status(daemon, origin.url("/vault"), in: "shared", token: Self.alpha) == 200)

            // After a restart the stored rows are still each token's own.
            daemon.stop()
            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await users(second, in: "shared", token: Self.alpha) == ["alpha-user"])
            #expect(try await users(second, in: "shared", token: Self.beta) == ["beta-user"])
            #expect(try await status(second, origin.url("/vault"), in: "shared", token: Self.beta) == 401)
            #expect(try await status(second, origin.url("/vault"), in: "shared", token: Self.alpha) == 200)
        }
    }
}
