import Foundation
import Testing
import TestSupport

/// Every URLRequest.CachePolicy, set on the task's request or as the session's
/// requestCachePolicy, against a stored response the origin would otherwise revalidate.
@Suite struct URLCachePolicyTests {
    /// A stored response that is stale and must be revalidated (the protocol policy never serves it as is).
    static func staleOrigin() throws -> CachingOrigin {
        let origin = try CachingOrigin()
        origin.set("/stale", body: "stored v1", headers: ["Cache-Control": "max-age=0, must-revalidate", "ETag": "\"v1\""])
        origin.set("/fresh", body: "fresh v1", headers: ["Cache-Control": "max-age=600", "ETag": "\"f1\""])
        return origin
    }

    @Test func reloadIgnoringLocalCacheDataLoadsAndStoresWhatComesBack() async throws {
        let origin = try Self.staleOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            _ = try await daemon.fetch(origin.url("/fresh"))
            origin.set("/fresh", body: "fresh v2", headers: ["Cache-Control": "max-age=600", "ETag": "\"f2\""])
            let reloaded = try await daemon.fetch(origin.url("/fresh"), ["cachePolicy": "reloadIgnoringLocalCacheData"])
            #expect(reloaded.task.string("cacheStatus") == "network")
            #expect(reloaded.body == "fresh v2")
            #expect(origin.requests(to: "/fresh").last?.header("If-None-Match") == nil)
            let next = try await daemon.fetch(origin.url("/fresh"))
            #expect(next.task.string("cacheStatus") == "cache")
            #expect(next.body == "fresh v2")
        }
    }

    @Test func reloadIgnoringLocalAndRemoteCacheDataAlsoAsksIntermediariesNotToAnswer() async throws {
        let origin = try Self.staleOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            _ = try await daemon.fetch(origin.url("/fresh"))
            let reloaded = try await daemon.fetch(origin.url("/fresh"), ["cachePolicy": "reloadIgnoringLocalAndRemoteCacheData"])
            #expect(reloaded.task.string("cacheStatus") == "network")
            let sent = try #require(origin.requests(to: "/fresh").last)
            #expect(sent.header("Cache-Control") == "no-cache")
            #expect(sent.header("Pragma") == "no-cache")
            #expect(sent.header("If-None-Match") == nil)
            #expect(origin.requests(to: "/fresh").count == 2)
        }
    }

    @Test func returnCacheDataElseLoadServesAStaleResponseAndLoadsAMiss() async throws {
        let origin = try Self.staleOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["configuration": ["requestCachePolicy": "returnCacheDataElseLoad"]]).string("id"))
            let miss = try await daemon.fetch(in: sid, origin.url("/stale"))
            #expect(miss.task.string("cacheStatus") == "network")
            // Stale and must-revalidate, yet served: Apple's "regardless of age or expiration date".
            let hit = try await daemon.fetch(in: sid, origin.url("/stale"))
            #expect(hit.task.string("cacheStatus") == "cache")
            #expect(hit.body == "stored v1")
            #expect(origin.requests(to: "/stale").count == 1)
        }
    }

    @Test func returnCacheDataDontLoadServesAnyStoredResponseAndFailsAMissWithResourceUnavailable() async throws {
        let origin = try Self.staleOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            _ = try await daemon.fetch(origin.url("/stale"))
            let hit = try await daemon.fetch(origin.url("/stale"), ["cachePolicy": "returnCacheDataDontLoad"])
            #expect(hit.task.string("cacheStatus") == "cache")
            #expect(hit.body == "stored v1")
            let miss = try await daemon.fetch(origin.url("/never-fetched"), ["cachePolicy": "returnCacheDataDontLoad"])
            #expect(miss.task.value(at: "error.code") as? Int == -1008)
            #expect(miss.task.value(at: "error.name") as? String == "resourceUnavailable")
            #expect(miss.task.isNull("response"))
            #expect(origin.requests(to: "/stale").count == 1)
            #expect(origin.requests(to: "/never-fetched").isEmpty)
        }
    }

    @Test func reloadRevalidatingCacheDataRevalidatesEvenAFreshResponse() async throws {
        let origin = try Self.staleOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            _ = try await daemon.fetch(origin.url("/fresh"))
            let checked = try await daemon.fetch(origin.url("/fresh"), ["cachePolicy": "reloadRevalidatingCacheData"])
            #expect(checked.task.string("cacheStatus") == "revalidated")
            #expect(checked.body == "fresh v1")
            #expect(origin.requests(to: "/fresh").last?.header("If-None-Match") == "\"f1\"")
            #expect(origin.requests(to: "/fresh").count == 2)
        }
    }

    @Test func useProtocolCachePolicyRevalidatesWhatMustBeRevalidated() async throws {
        let origin = try Self.staleOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            _ = try await daemon.fetch(origin.url("/stale"))
            let again = try await daemon.fetch(origin.url("/stale"), ["cachePolicy": "useProtocolCachePolicy"])
            #expect(again.task.string("cacheStatus") == "revalidated")
            #expect(again.task.value(at: "originalRequest.cachePolicy") as? String == "useProtocolCachePolicy")
            #expect(origin.requests(to: "/stale").count == 2)
        }
    }

    @Test func theTasksCachePolicyOverridesTheSessions() async throws {
        let origin = try Self.staleOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["configuration": ["requestCachePolicy": "returnCacheDataDontLoad"]]).string("id"))
            let loaded = try await daemon.fetch(in: sid, origin.url("/fresh"), ["cachePolicy": "reloadIgnoringLocalCacheData"])
            #expect(loaded.task.value(at: "originalRequest.cachePolicy") as? String == "reloadIgnoringLocalCacheData")
            #expect(loaded.task.string("cacheStatus") == "network")
            let cached = try await daemon.fetch(in: sid, origin.url("/fresh"))
            #expect(cached.task.value(at: "originalRequest.cachePolicy") as? String == "returnCacheDataDontLoad")
            #expect(cached.task.string("cacheStatus") == "cache")
            #expect(origin.requests(to: "/fresh").count == 1)
        }
    }
}
