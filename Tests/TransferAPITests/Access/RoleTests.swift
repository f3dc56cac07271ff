import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Roles (issue 16, item 4): a tenant token cannot change or read what every tenant shares
/// (403 `forbidden`, nothing changed); an admin token can; without tokens everything stays open.
@Suite struct RoleTests {
    static let (admin, alice, bob) = (ThreeTokens.admin, ThreeTokens.alice, ThreeTokens.bob)

    /// Every route that acts on the whole daemon is an admin's: the list a reviewer checks.
    @Test func theDaemonWideRoutesAreTheAdminOnes() async throws {
        try await DaemonFixture.with { daemon in
            let handler = APIHandler(service: daemon.daemon.service, authenticator: Authenticator(tokens: []))
            #expect(Set(handler.adminRoutes) == ["PATCH /v1/limits", "DELETE /v1/cache", "GET /v1/stats", "GET /v1/cluster", "GET /metrics"])
        }
    }

    @Test func aTenantIsRefusedTheDaemonWideOperationsAndAnAdminMayUseThem() async throws {
        try await DaemonFixture.with(configure: ThreeTokens.configure, token: Self.alice) { daemon in
            let limits = try await daemon.get("/v1/limits").object()
            for tenant in [Self.alice, Self.bob] {
                let operations: [(String, String, Any?)] = [
                    ("PATCH", "/v1/limits", ["downloadBytesPerSecond": 1]),
                    ("DELETE", "/v1/cache", nil),
                    ("GET", "/v1/stats", nil),
                    ("GET", "/v1/cluster", nil),
                    ("GET", "/metrics", nil),
                ]
                for (method, path, json) in operations {
                    let refused = try await daemon.request(method, path, json: json, token: .some(tenant))
                    #expect(refused.status == 403, "\(method) \(path): \(refused)")
                    #expect(refused.errorCode == "forbidden")
                    #expect(refused.error?.string("message")?.contains("needs an admin token") == true)
                }
                // Readable by every token: the limits bound its own transfers too. Unchanged.
                let read = try await daemon.get("/v1/limits", token: .some(tenant))
                #expect(read.status == 200)
                #expect(jsonEqual(try read.object(), limits))
            }

            let changed = try await daemon.patch("/v1/limits", json: ["downloadBytesPerSecond": 1_000_000], token: .some(Self.admin))
            #expect(changed.status == 200, "\(changed)")
            #expect(try await daemon.get("/v1/limits", token: .some(Self.alice)).object().int("downloadBytesPerSecond") == 1_000_000)
            #expect(try await daemon.get("/v1/stats", token: .some(Self.admin)).status == 200)
            let metrics = try await daemon.get("/metrics", token: .some(Self.admin))
            #expect(metrics.status == 200 && metrics.text.contains("# TYPE"))
            #expect(try await daemon.request("DELETE", "/v1/cache", token: .some(Self.admin)).status == 204)
        }
    }

    /// A data task's cacheStatus, run as `token`.
    private func cacheStatus(_ daemon: DaemonFixture, _ url: String, _ token: String) async throws -> String? {
        let created = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": url]], token: .some(token)).object()
        return try await daemon.waitForCompletion(try #require(created.int("id")), token: .some(token)).string("cacheStatus")
    }

    /// The admin's purge empties every tenant's part of the shared cache; a tenant's own purge
    /// (of its session's cache) only its own.
    @Test func anAdminPurgeEmptiesEveryTenantsPartOfTheCache() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/page", body: "page", headers: ["Cache-Control": "max-age=600"])
        try await DaemonFixture.with(configure: ThreeTokens.configure, token: Self.alice) { daemon in
            // (A throwing statement outside #expect: the closure is then inferred as throwing.)
            let first = try await cacheStatus(daemon, origin.url("/page"), Self.admin)
            #expect(first == "network")
            for token in [Self.alice, Self.bob] {
                #expect(try await cacheStatus(daemon, origin.url("/page"), token) == "network")
                #expect(try await cacheStatus(daemon, origin.url("/page"), token) == "cache")
            }
            #expect(try await daemon.request("DELETE", "/v1/cache", token: .some(Self.bob)).status == 403)
            #expect(try await cacheStatus(daemon, origin.url("/page"), Self.alice) == "cache", "a refused purge emptied the cache")
            #expect(try await daemon.request("DELETE", "/v1/cache", token: .some(Self.admin)).status == 204)
            #expect(try await cacheStatus(daemon, origin.url("/page"), Self.alice) == "network")
            #expect(try await cacheStatus(daemon, origin.url("/page"), Self.bob) == "network")
        }
    }

    /// A tenant's queue counts only its own tasks, in its total and its positions; an admin's
    /// counts everyone's.
    @Test func aTenantsQueueTotalIsItsOwn() async throws {
        try await DaemonFixture.with(configure: { configuration in
            ThreeTokens.configure(&configuration)
            configuration.service.maxConcurrentTransfers = 1
        }, token: Self.alice) { daemon in
            // One slot, taken by a transfer whose body never comes: the others stay queued.
            let stalled = try OriginServer { _ in .stallAfterHeaders(contentLength: 100) }
            defer { stalled.stop() }
            func create(_ token: String) async throws -> Int {
                let created = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": stalled.url("/slow")]], token: .some(token))
                return try #require(try created.object().int("id"), "\(created)")
            }
            let blocker = try await create(Self.admin)
            try await daemon.waitForTask(blocker, token: .some(Self.admin)) { $0.string("phase") == "transferring" }
            _ = try await create(Self.alice)
            _ = try await create(Self.alice)
            _ = try await create(Self.bob)
            #expect(try await daemon.get("/v1/queue", token: .some(Self.admin)).object().int("total") == 3)
            let alice = try await daemon.get("/v1/queue", token: .some(Self.alice)).object()
            #expect(alice.int("total") == 2)
            #expect((alice["tasks"] as? [[String: Any]])?.compactMap { $0.int("position") } == [1, 2])
            // Bob's task waits behind alice's two; he is not told so.
            let bob = try await daemon.get("/v1/queue", token: .some(Self.bob)).object()
            #expect(bob.int("total") == 1)
            #expect((bob["tasks"] as? [[String: Any]])?.compactMap { $0.int("position") } == [1])
        }
    }

    /// One bare token (the form before roles) is the single user's, an admin; without tokens
    /// everything is allowed as before.
    @Test func aSingleBareTokenAndNoTokensKeepEveryOperation() async throws {
        try await DaemonFixture.with(configure: { $0.tokens = [Self.alice] }, token: Self.alice) { daemon in
            let patched = try await daemon.patch("/v1/limits", json: ["downloadBytesPerSecond": 5000])
            #expect(patched.status == 200)
            #expect(try await daemon.get("/metrics").status == 200)
        }
        try await DaemonFixture.with { daemon in
            let patched = try await daemon.patch("/v1/limits", json: ["downloadBytesPerSecond": 5000])
            #expect(patched.status == 200)
            #expect(try await daemon.request("DELETE", "/v1/cache").status == 204)
            #expect(try await daemon.get("/v1/stats").status == 200)
        }
    }

    /// Naming a token keeps what it created as a bare token: the owner is its secret's fingerprint.
    @Test func namingABareTokenKeepsItsTasks() async throws {
        try await DaemonFixture.with(configure: { $0.tokens = [Self.alice, Self.bob] }, token: Self.alice) { first in
            let session = try await first.post("/v1/sessions", json: ["description": "alice's"]).object()
            first.stop()
            var renamed = first.configuration
            renamed.tokens = ["alice:\(Self.alice)", "bob:\(Self.bob)"]
            let second = try first.restarted(renamed)
            defer { second.stop() }
            #expect(try await second.get("/v1/sessions/\(try #require(session.string("id")))").status == 200)
            #expect(try await second.get("/v1/sessions/\(try #require(session.string("id")))", token: .some(Self.bob)).status == 404)
        }
    }

    /// A bad token configuration stops the daemon from starting, saying why.
    @Test func aBadTokenConfigurationRefusesToStart() throws {
        let directory = try TempDirectory(prefix: "transferd-apitest")
        defer { directory.remove() }
        var configuration = DaemonFixture.baseConfiguration(directory)
        configuration.tokens = ["ops:secret:superuser"]
        #expect { _ = try TransferDaemon(configuration: configuration) } throws: { "\($0)".contains("superuser") }
        configuration.tokens = []
        configuration.tokenFile = directory.path + "/tokens"
        try Data("# tokens\nops:ops-secret:admin\nnot a token line\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/tokens"))
        chmod(directory.path + "/tokens", 0o600)
        #expect { _ = try TransferDaemon(configuration: configuration) } throws: { "\($0)".contains("line 3") }
    }
}
