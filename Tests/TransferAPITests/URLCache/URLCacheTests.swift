import Foundation
import Testing
import TestSupport

/// The URL cache under useProtocolCachePolicy (RFC 9111), end to end: the real daemon, libcurl
/// and an in-process origin that counts what reaches it.
@Suite struct URLCacheTests {
    @Test func aFreshResponseIsServedFromTheCacheWithoutReachingTheOrigin() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/fresh", body: "fresh body", headers: ["Cache-Control": "max-age=600", "X-Origin": "yes"])
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let first = try await daemon.fetch(in: sid, origin.url("/fresh"))
            #expect(first.task.string("cacheStatus") == "network")
            let firstId = try #require(first.task.int("id"))
            let firstEvents = try await daemon.allEvents(sid).filter { $0.int("taskId") == firstId }
            let types = firstEvents.compactMap { $0.string("type") }
            // willCacheResponse after the data, before the metrics and the completion (URLSession's order).
            #expect(types == ["didReceiveResponse", "didReceiveData", "willCacheResponse", "didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")
            let announce = try #require(firstEvents.first { $0.string("type") == "willCacheResponse" })
            #expect(announce.string("storagePolicy") == "allowed")
            #expect(announce.value(at: "response.statusCode") as? Int == 200)

            let second = try await daemon.fetch(in: sid, origin.url("/fresh"))
            #expect(second.body == "fresh body")
            #expect(second.task.string("cacheStatus") == "cache")
            #expect(second.task.value(at: "response.statusCode") as? Int == 200)
            #expect(second.task.value(at: "response.headers.X-Origin") as? String == "yes")
            #expect(second.task.value(at: "response.mimeType") as? String == "text/plain")
            #expect(second.task.value(at: "progress.bytesReceived") as? Int == 10)
            #expect(origin.requests(to: "/fresh").count == 1, "the second GET reached the origin")
            let secondTypes = try await daemon.eventTypes(sid, task: second.task.int("id"))
            #expect(secondTypes == ["didReceiveResponse", "didReceiveData", "didFinishCollectingMetrics", "didCompleteWithError"], "\(secondTypes)")
            // Its metrics: one localCache transaction, with no network phase, address or byte.
            let fromCache = try await Self.transactions(daemon, second.task.int("id"))
            #expect(fromCache.count == 1, "\(fromCache)")
            let hit = try #require(fromCache.first)
            #expect(hit.string("resourceFetchType") == "localCache" && hit.value(at: "response.statusCode") as? Int == 200, "\(hit)")
            #expect(hit.value(at: "request.url") as? String == origin.url("/fresh"))
            for never in ["domainLookupStartDate", "connectStartDate", "secureConnectionStartDate", "networkProtocolName", "remoteAddress", "localPort"] {
                #expect(hit.isNull(never), "\(never) of a cache hit: \(hit)")
            }
            for counted in ["countOfRequestHeaderBytesSent", "countOfResponseHeaderBytesReceived", "countOfResponseBodyBytesReceived"] {
                #expect(hit.int(counted) == 0, "\(counted) of a cache hit: \(hit)")
            }
            #expect(["fetchStartDate", "requestStartDate", "responseStartDate", "responseEndDate"].allSatisfy { hit[$0] is String }, "\(hit)")
            let network = try await Self.transactions(daemon, firstId)
            #expect(network.map { $0.string("resourceFetchType") } == ["networkLoad"], "\(network)")
        }
    }

    private static func transactions(_ daemon: DaemonFixture, _ task: Int?, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        try await daemon.transactions(ofTask: try #require(task, sourceLocation: sourceLocation))
    }

    @Test func aStaleResponseIsRevalidatedAndA304ServesTheStoredBodyWithUpdatedHeaders() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/etag", body: "etag body v1", headers: ["Cache-Control": "max-age=0", "ETag": "\"v1\"", "X-Version": "1"],
                   notModified: ["Cache-Control": "max-age=600", "X-Version": "1-checked", "Content-Type": "text/html"])
        try await DaemonFixture.with { daemon in
            let first = try await daemon.fetch(origin.url("/etag"))
            #expect(first.task.string("cacheStatus") == "network")
            let second = try await daemon.fetch(origin.url("/etag"))
            let requests = origin.requests(to: "/etag")
            #expect(requests.count == 2)
            #expect(requests.last?.header("If-None-Match") == "\"v1\"")
            #expect(second.task.string("cacheStatus") == "revalidated")
            #expect(second.body == "etag body v1")
            // The task shows the stored 200, its fields updated by the 304 except Content-*.
            #expect(second.task.value(at: "response.statusCode") as? Int == 200)
            #expect(second.task.value(at: "response.headers.X-Version") as? String == "1-checked")
            #expect(second.task.value(at: "response.mimeType") as? String == "text/plain")
            // The 304 came over the network; the body the task got came from the cache.
            let revalidation = try await Self.transactions(daemon, second.task.int("id"))
            #expect(revalidation.map { $0.string("resourceFetchType") } == ["networkLoad", "localCache"], "\(revalidation)")
            #expect(revalidation.map { $0.value(at: "response.statusCode") as? Int } == [304, 200], "\(revalidation)")
            // The 304 made it fresh for 600 s: the third GET stays here.
            let third = try await daemon.fetch(origin.url("/etag"))
            #expect(third.task.string("cacheStatus") == "cache")
            #expect(third.body == "etag body v1")
            #expect(origin.requests(to: "/etag").count == 2)
        }
    }

    @Test func lastModifiedRevalidatesWithIfModifiedSinceAndNoCacheIsAlwaysRevalidated() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        origin.set("/dated", body: "dated", headers: ["Cache-Control": "no-cache, max-age=600", "Last-Modified": lastModified])
        try await DaemonFixture.with { daemon in
            _ = try await daemon.fetch(origin.url("/dated"))
            for _ in 0..<2 {
                let again = try await daemon.fetch(origin.url("/dated"))
                #expect(again.task.string("cacheStatus") == "revalidated")
                #expect(again.body == "dated")
            }
            let requests = origin.requests(to: "/dated")
            #expect(requests.count == 3)
            #expect(requests.dropFirst().allSatisfy { $0.header("If-Modified-Since") == lastModified && $0.header("If-None-Match") == nil })
        }
    }

    @Test func aChangedResourceReplacesTheStoredResponse() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/changing", body: "old", headers: ["Cache-Control": "max-age=0", "ETag": "\"a\""])
        try await DaemonFixture.with { daemon in
            _ = try await daemon.fetch(origin.url("/changing"))
            origin.set("/changing", body: "new", headers: ["Cache-Control": "max-age=600", "ETag": "\"b\""])
            let changed = try await daemon.fetch(origin.url("/changing"))
            #expect(origin.requests(to: "/changing").last?.header("If-None-Match") == "\"a\"")
            #expect(changed.task.string("cacheStatus") == "network")
            #expect(changed.body == "new")
            let cached = try await daemon.fetch(origin.url("/changing"))
            #expect(cached.task.string("cacheStatus") == "cache")
            #expect(cached.body == "new")
            #expect(origin.requests(to: "/changing").count == 2)
        }
    }

    @Test func varySelectsTheStoredResponseByRequestHeaders() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/vary", body: "varied", headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        origin.set("/star", body: "star", headers: ["Cache-Control": "max-age=600", "Vary": "*"])
        try await DaemonFixture.with { daemon in
            let german = ["headers": ["Accept-Language": "de"]]
            let first = try await daemon.cacheStatus(origin.url("/vary"), german)
            #expect(first == "network")
            #expect(try await daemon.cacheStatus(origin.url("/vary"), german) == "cache")
            #expect(try await daemon.cacheStatus(origin.url("/vary"), ["headers": ["Accept-Language": "fr"]]) == "network")
            #expect(try await daemon.cacheStatus(origin.url("/vary")) == "network")
            #expect(origin.requests(to: "/vary").count == 3)
            // Vary: * never matches, so it is not stored at all.
            for _ in 0..<2 { #expect(try await daemon.cacheStatus(origin.url("/star")) == "network") }
            #expect(origin.requests(to: "/star").count == 2)
        }
    }

    @Test func noStoreOnTheResponseOrTheRequestIsNeverStored() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/secret", body: "secret", headers: ["Cache-Control": "no-store, max-age=600"])
        origin.set("/asked", body: "asked", headers: ["Cache-Control": "max-age=600"])
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            for _ in 0..<2 {
                #expect(try await daemon.cacheStatus(in: sid, origin.url("/secret")) == "network")
                #expect(try await daemon.cacheStatus(in: sid, origin.url("/asked"), ["headers": ["Cache-Control": "no-store"]]) == "network")
            }
            #expect(origin.requests(to: "/secret").count == 2)
            #expect(origin.requests(to: "/asked").count == 2)
            #expect(try await daemon.allEvents(sid).allSatisfy { $0.string("type") != "willCacheResponse" })
        }
    }

    @Test func aSuccessfulUnsafeMethodInvalidatesTheStoredResponse() async throws {
        let origin = try CachingOrigin()
        defer { origin.stop() }
        origin.set("/item", body: "item", headers: ["Cache-Control": "max-age=600"])
        try await DaemonFixture.with { daemon in
            _ = try await daemon.fetch(origin.url("/item"))
            #expect(try await daemon.cacheStatus(origin.url("/item")) == "cache")
            let post = try await daemon.fetch(origin.url("/item"), ["method": "POST", "body": ["text": "change"]])
            #expect(post.task.value(at: "response.statusCode") as? Int == 200)
            #expect(try await daemon.cacheStatus(origin.url("/item")) == "network")
            #expect(origin.requests(to: "/item").map(\.method) == ["GET", "POST", "GET"])
        }
    }
}
