import Foundation
import Testing
import TestSupport
import TransferAPI

/// The URL cache of a daemon with tokens (issue 16, item 1): partitioned per token, so one
/// tenant's stored response never answers another's request, and within a token a shared cache
/// (RFC 9111 3.5): never a `private` response, and a response to a request that carried
/// Authorization only when it allows reuse (here `public`). Resetting a session's cache
/// empties only the asking token's part.
@Suite struct URLCacheTenantTests {
    static let alpha = "alpha-token-0123456789"
    static let beta = "beta-token-9876543210"

    /// Runs a data task as `token`; returns its cacheStatus and body.
    private func fetch(_ daemon: DaemonFixture, _ url: String, token: String, headers: [String: String] = [:]) async throws -> (status: String?, body: String) {
        let created = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": url, "headers": headers]], token: .some(token)).object()
        let id = try #require(created.int("id"))
        let task = try await daemon.waitForCompletion(id, token: .some(token))
        #expect(task.object("error") == nil, "\(task)")
        let body = try await daemon.request("GET", "/v1/tasks/\(id)/body", token: .some(token))
        return (task.string("cacheStatus"), String(decoding: body.body, as: UTF8.self))
    }

    @Test func tenantsDoNotShareCachedResponsesAndAuthorizedOnesNeedPublic() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/page", body: "public page", headers: ["Cache-Control": "max-age=600"])
        origin.set("/mine", body: "alpha's private page", headers: ["Cache-Control": "private, max-age=600"])
        origin.set("/authorized", body: "authorized, reusable by nobody", headers: ["Cache-Control": "max-age=600"])
        origin.set("/authorized-public", body: "authorized, public", headers: ["Cache-Control": "public, max-age=600"])
        try await DaemonFixture.with(configure: { $0.tokens = [Self.alpha, Self.beta] }, token: Self.alpha) { daemon in
            // Partitioned: each token fills its own part; its second fetch is a hit.
            #expect(try await fetch(daemon, origin.url("/page"), token: Self.alpha).status == "network")
            #expect(try await fetch(daemon, origin.url("/page"), token: Self.alpha).status == "cache")
            #expect(try await fetch(daemon, origin.url("/page"), token: Self.beta).status == "network", "beta was answered from alpha's part")
            #expect(try await fetch(daemon, origin.url("/page"), token: Self.beta).status == "cache")
            #expect(origin.requests(to: "/page").count == 2)

            // A private response is not stored by a cache a token's clients share.
            let credentials = ["Authorization": "Bearer alpha-at-origin"]
            for _ in 0..<2 {
                let mine = try await fetch(daemon, origin.url("/mine"), token: Self.alpha, headers: credentials)
                #expect(mine.status == "network" && mine.body == "alpha's private page")
            }
            #expect(try await fetch(daemon, origin.url("/mine"), token: Self.beta).status == "network")
            #expect(origin.requests(to: "/mine").count == 3)

            // Sent with Authorization: stored only when the response allows its reuse.
            _ = try await fetch(daemon, origin.url("/authorized"), token: Self.alpha, headers: credentials)
            #expect(try await fetch(daemon, origin.url("/authorized"), token: Self.alpha).status == "network")
            _ = try await fetch(daemon, origin.url("/authorized-public"), token: Self.alpha, headers: credentials)
            #expect(try await fetch(daemon, origin.url("/authorized-public"), token: Self.alpha, headers: credentials).status == "cache")

            // Beta empties the cache of the shared session: only its own part goes.
            let purge = try await daemon.request("DELETE", "/v1/sessions/shared/cache", token: .some(Self.beta))
            #expect(purge.status == 200 || purge.status == 204, "\(purge)")
            #expect(try await fetch(daemon, origin.url("/page"), token: Self.alpha).status == "cache", "beta's purge emptied alpha's part")
            #expect(try await fetch(daemon, origin.url("/page"), token: Self.beta).status == "network")
        }
    }
}
