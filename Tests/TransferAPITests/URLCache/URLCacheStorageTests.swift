import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Where the URL cache keeps what it stores: capacities with LRU eviction in memory and on disk,
/// body files under <data>/cache for default sessions (kept across a restart), memory only for
/// ephemeral sessions, nothing for background sessions; and DELETE /v1/sessions/{sid}/cache.
@Suite struct URLCacheStorageTests {
    /// Files in <data>/cache.
    static func cacheFiles(_ daemon: DaemonFixture) -> [String] {
        FileSystemProbe.tree(daemon.dataPath + "/cache")
    }

    /// Stores `count` fresh responses of `size` bytes, then uses the first again, then stores one
    /// more: the second one (least recently used) must be the one evicted.
    static func checkLRU(_ daemon: DaemonFixture, session: String, origin: CachingOrigin, count: Int, size: Int) async throws {
        for n in 0...count { origin.set("/lru/\(n)", body: String(repeating: "\(n % 10)", count: size), headers: ["Cache-Control": "max-age=600"]) }
        for n in 0..<count { #expect(try await daemon.cacheStatus(in: session, origin.url("/lru/\(n)")) == "network") }
        #expect(try await daemon.cacheStatus(in: session, origin.url("/lru/0")) == "cache")
        _ = try await daemon.fetch(in: session, origin.url("/lru/\(count)"))
        #expect(try await daemon.cacheStatus(in: session, origin.url("/lru/0")) == "cache", "the most recently used was evicted")
        #expect(try await daemon.cacheStatus(in: session, origin.url("/lru/2")) == "cache")
        #expect(try await daemon.cacheStatus(in: session, origin.url("/lru/1")) == "network", "the least recently used was kept")
        #expect(origin.requests(to: "/lru/1").count == 2)
    }

    @Test func theMemoryTierEvictsTheLeastRecentlyUsedAtItsCapacity() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            // 20 bodies of 100 bytes fill 2,000 bytes; a tier takes bodies up to 5 % of it.
            let sid = try #require(try await daemon.createSession(["kind": "ephemeral", "configuration": ["urlCache": ["memoryCapacity": 2_000]]]).string("id"))
            try await Self.checkLRU(daemon, session: sid, origin: origin, count: 20, size: 100)
            let usage = daemon.daemon.service.urlCaches.shared.usage
            #expect(usage.memory == 0 && usage.disk == 0, "an ephemeral session used the shared cache")
        }
    }

    @Test func theDiskTierEvictsTheLeastRecentlyUsedAndDeletesItsFile() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with(configure: {
            $0.service.urlCacheMemoryCapacity = 0
            $0.service.urlCacheDiskCapacity = 2_000
        }) { daemon in
            try await Self.checkLRU(daemon, session: "shared", origin: origin, count: 20, size: 100)
            daemon.daemon.service.urlCaches.flush()
            let files = Self.cacheFiles(daemon)
            #expect(files.count == 20, "\(files)")
            let bytes = files.compactMap { FileSystemProbe.size(daemon.dataPath + "/cache/" + $0) }.reduce(0, +)
            #expect(bytes == 2_000)
            #expect(daemon.daemon.service.urlCaches.shared.usage.disk == 2_000)
            // A body larger than 5 % of the disk capacity is not stored (and not announced).
            origin.set("/large", body: String(repeating: "L", count: 101), headers: ["Cache-Control": "max-age=600"])
            for _ in 0..<2 { #expect(try await daemon.cacheStatus(origin.url("/large")) == "network") }
        }
    }

    @Test func aRestartKeepsTheDefaultDiskCache() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/kept", body: "kept across a restart", headers: ["Cache-Control": "max-age=600", "ETag": "\"k\""])
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            #expect(try await daemon.cacheStatus(in: sid, origin.url("/kept")) == "network")
            daemon.stop()
            let second = try daemon.restarted()
            defer { second.stop() }
            let again = try await second.fetch(in: sid, origin.url("/kept"))
            #expect(again.task.string("cacheStatus") == "cache")
            #expect(again.body == "kept across a restart")
            #expect(again.task.value(at: "response.headers.ETag") as? String == "\"k\"")
            #expect(origin.requests(to: "/kept").count == 1)
        }
    }

    @Test func deleteEmptiesTheSessionsCacheAndItsFiles() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/gone", body: "soon gone", headers: ["Cache-Control": "max-age=600"])
        try await DaemonFixture.with { daemon in
            let first = try #require(try await daemon.createSession().string("id"))
            let other = try #require(try await daemon.createSession().string("id"))
            _ = try await daemon.fetch(in: first, origin.url("/gone"))
            // Default sessions share URLCache.shared: the other one sees the stored response...
            #expect(try await daemon.cacheStatus(in: other, origin.url("/gone")) == "cache")
            daemon.daemon.service.urlCaches.flush()
            #expect(Self.cacheFiles(daemon).count == 1)
            // ...and emptying it through one session empties it for both.
            let deleted = try await daemon.request("DELETE", "/v1/sessions/\(first)/cache")
            #expect(deleted.status == 204, "\(deleted)")
            #expect(Self.cacheFiles(daemon).isEmpty)
            #expect(try await daemon.cacheStatus(in: other, origin.url("/gone")) == "network")
            #expect(origin.requests(to: "/gone").count == 2)

            let unknown = try await daemon.request("DELETE", "/v1/sessions/no-such-session/cache")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "not_found")
            #expect(try await daemon.request("GET", "/v1/sessions/\(first)/cache").status == 405)
        }
    }

    @Test func anEphemeralSessionsCachedBodyNeverReachesTheDisk() async throws {
        let ephemeralMarker = "ephemeral-cache-\(UUID().uuidString)"
        let defaultMarker = "default-cache-\(UUID().uuidString)"
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/e", body: ephemeralMarker, headers: ["Cache-Control": "max-age=600"])
        origin.set("/d", body: defaultMarker, headers: ["Cache-Control": "max-age=600"])
        try await DaemonFixture.with { daemon in
            let ephemeral = try #require(try await daemon.createSession(["kind": "ephemeral"]).string("id"))
            let recorded = try #require(try await daemon.createSession().string("id"))
            for _ in 0..<2 {
                _ = try await daemon.fetch(in: ephemeral, origin.url("/e"))
                _ = try await daemon.fetch(in: recorded, origin.url("/d"))
            }
            // Both were cached (the second GETs never reached the origin)...
            #expect(origin.requests(to: "/e").count == 1)
            #expect(origin.requests(to: "/d").count == 1)
            let announce = try #require(try await daemon.allEvents(ephemeral).first { $0.string("type") == "willCacheResponse" })
            #expect(announce.string("storagePolicy") == "allowedInMemoryOnly")
            daemon.stop()
            // ...but only the default session's body is on disk: the control shows the scan works.
            let withDefault = Self.files(under: daemon.dataPath, containing: defaultMarker)
            #expect(withDefault.contains { $0.hasPrefix("cache/") }, "the control was not found in <data>/cache: \(withDefault)")
            let leaks = Self.files(under: daemon.dataPath, containing: ephemeralMarker)
            #expect(leaks.isEmpty, "the ephemeral session's cached body reached: \(leaks)")
        }
    }

    @Test func backgroundSessionsNeverCache() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/bg", body: "background", headers: ["Cache-Control": "max-age=600"])
        try await DaemonFixture.with { daemon in
            let session = try await daemon.createSession(["kind": "background", "identifier": "com.example.cache",
                                                          "configuration": ["urlCache": ["memoryCapacity": 1_000_000, "diskCapacity": 1_000_000]]])
            let sid = try #require(session.string("id"))
            #expect((session.object("configuration") ?? [:]).isNull("urlCache"))
            for _ in 0..<2 { #expect(try await daemon.cacheStatus(in: sid, origin.url("/bg")) == "network") }
            #expect(origin.requests(to: "/bg").count == 2)
            #expect(try await daemon.allEvents(sid).allSatisfy { $0.string("type") != "willCacheResponse" })
            let miss = try await daemon.fetch(in: sid, origin.url("/bg"), ["cachePolicy": "returnCacheDataDontLoad"])
            #expect(miss.task.value(at: "error.name") as? String == "resourceUnavailable")
            #expect(try await daemon.request("DELETE", "/v1/sessions/\(sid)/cache").status == 204)
        }
    }

    @Test func aSessionsUrlCacheReportsWhatTakesEffect() async throws {
        try await DaemonFixture.with(configure: {
            $0.service.urlCacheMemoryCapacity = 1_000
            $0.service.urlCacheDiskCapacity = 50_000
        }) { daemon in
            func urlCache(_ body: [String: Any]) async throws -> Any? {
                try await daemon.createSession(body).object("configuration")?["urlCache"]
            }
            let shared: [String: Any] = ["memoryCapacity": 1_000, "diskCapacity": 50_000]
            #expect(jsonEqual(try await urlCache([:]), shared))
            #expect(jsonEqual(try await urlCache(["configuration": ["urlCache": ["memoryCapacity": 5]]]), shared))
            #expect(try await urlCache(["configuration": ["urlCache": NSNull()]]) is NSNull)
            #expect(jsonEqual(try await urlCache(["kind": "ephemeral"]), ["memoryCapacity": 1_000, "diskCapacity": 0]))
            #expect(jsonEqual(try await urlCache(["kind": "ephemeral", "configuration": ["urlCache": ["memoryCapacity": 77, "diskCapacity": 99]]]),
                              ["memoryCapacity": 77, "diskCapacity": 0]))
            #expect(jsonEqual(try await daemon.session("shared").object("configuration")?["urlCache"], shared))

            for (bad, field) in [(["memoryCapacity": -1], "configuration.urlCache.memoryCapacity"),
                                 (["diskCapacity": 1.5], "configuration.urlCache.diskCapacity"),
                                 (["memoryCapacity": 1, "size": 2], "configuration.urlCache.size")] as [([String: Any], String)] {
                let response = try await daemon.post("/v1/sessions", json: ["configuration": ["urlCache": bad]])
                #expect([400, 422].contains(response.status), "\(bad): \(response)")
                #expect(response.error?.string("field") == field, "\(bad): \(response)")
            }
            let wrongType = try await daemon.post("/v1/sessions", json: ["configuration": ["urlCache": 12]])
            #expect([400, 422].contains(wrongType.status), "\(wrongType)")
        }
    }

    @Test func theContractDescribesTheCache() async throws {
        try await DaemonFixture.with { daemon in
            let document = try await daemon.get("/openapi.yaml").text
            for part in ["/v1/sessions/{sid}/cache:", "operationId: removeCachedResponses", "URLCacheConfiguration:",
                         "cacheStatus:", "WillCacheResponseEvent:", "- willCacheResponse"] {
                #expect(document.contains(part), "openapi.yaml lacks \(part)")
            }
        }
    }

    /// Files under `folder` whose bytes contain `marker` (relative paths).
    static func files(under folder: String, containing marker: String) -> [String] {
        let needle = Data(marker.utf8)
        return FileSystemProbe.tree(folder).filter { path in
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + path)) else { return false }
            return data.range(of: needle) != nil
        }
    }
}
