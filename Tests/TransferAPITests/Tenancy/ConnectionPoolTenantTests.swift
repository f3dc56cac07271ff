import Foundation
import Testing
import TestSupport
import TransferAPI

/// Connections are pooled per session, as URLSession pools them, and the `shared` session's per
/// tenant (issue 16, item 7): the origin sees which connection each request came on, so a
/// request that rode another session's or another token's connection shows.
@Suite struct ConnectionPoolTenantTests {
    static let alpha = "alpha-token-0123456789"
    static let beta = "beta-token-9876543210"

    /// Runs one GET as `token` in `session`; returns the origin's index of its connection.
    private func connection(_ path: String, in session: String, token: String, _ daemon: DaemonFixture, _ origin: OriginServer) async throws -> Int {
        let created = try await daemon.post("/v1/sessions/\(session)/tasks", json: ["kind": "data", "request": ["url": origin.url(path)]], token: .some(token))
        let id = try #require(try created.object().int("id"), "\(created)")
        #expect(try await daemon.waitForCompletion(id, token: .some(token)).isNull("error"))
        let request = try #require(origin.requests.last { $0.path == path }, "the origin never saw \(path)")
        return request.connectionIndex
    }

    @Test func sessionsAndTenantsNeverShareAConnection() async throws {
        let origin = try OriginServer { request in .text("ok \(request.path)") }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.tokens = [Self.alpha, Self.beta] }, token: Self.alpha) { daemon in
            // The control: one tenant's requests in the shared session reuse its connection.
            let a1 = try await connection("/a1", in: "shared", token: Self.alpha, daemon, origin)
            let a2 = try await connection("/a2", in: "shared", token: Self.alpha, daemon, origin)
            #expect(a1 == a2, "requests of one session did not reuse a connection: the test would prove nothing")
            // Another token's shared session: its own connection, reused by it alone.
            let b1 = try await connection("/b1", in: "shared", token: Self.beta, daemon, origin)
            let b2 = try await connection("/b2", in: "shared", token: Self.beta, daemon, origin)
            #expect(b1 != a1, "beta's request rode alpha's connection")
            #expect(b1 == b2)
            // A session of alpha's own: not the shared session's connection either.
            let created = try await daemon.post("/v1/sessions", json: [:], token: .some(Self.alpha))
            let sid = try #require(try created.object().string("id"), "\(created)")
            let s1 = try await connection("/s1", in: sid, token: Self.alpha, daemon, origin)
            #expect(s1 != a1 && s1 != b1, "a new session rode another session's connection")
            #expect(try await connection("/a3", in: "shared", token: Self.alpha, daemon, origin) == a1)
            #expect(origin.connectionCount == 3)
        }
    }
}
