import Foundation
import Testing
import TestSupport

/// The URL cache against httpbin (under gunicorn) on 127.0.0.1: /cache and /etag/{etag} are
/// revalidated (httpbin's access log shows its 304) and the body comes from the cache;
/// /cache/{n} is served fresh; no-store is never stored.
@Suite struct URLCachePeerTests {
    /// Waits (at most 5 s; gunicorn writes the line after answering) for access log lines
    /// requesting `target`, and returns their statuses in order.
    static func statuses(in log: URL, for target: String) async throws -> [Int] {
        let deadline = Date().addingTimeInterval(5)
        var statuses: [Int] = []
        repeat {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            statuses = text.split(separator: "\n").compactMap { line -> Int? in
                guard let range = line.range(of: "\"GET \(target) HTTP/1.1\" ") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }
            if statuses.count >= 2 { return statuses }
            try await Task.sleep(for: .milliseconds(100))
        } while Date() < deadline
        return statuses
    }

    /// The `headers` httpbin echoed in a body.
    static func echoedProbe(_ body: String) throws -> String? {
        let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        return (object?["headers"] as? [String: Any])?["X-Probe"] as? String
    }

    @Test func httpbinCacheIsRevalidatedAndThe304ServesTheStoredBody() async throws {
        let httpbin = try Peers.httpbin()
        let log = try Peers.httpbinLog()
        let target = "/cache?probe=\(UUID().uuidString)"
        try await DaemonFixture.with { daemon in
            let first = try await daemon.fetch(httpbin + target, ["headers": ["X-Probe": "first"]])
            #expect(first.task.string("cacheStatus") == "network")
            #expect(try Self.echoedProbe(first.body) == "first")
            // /cache's Last-Modified is its Date: a heuristic lifetime of at most 0.1 s.
            try await Task.sleep(for: .milliseconds(1_100))
            let second = try await daemon.fetch(httpbin + target, ["headers": ["X-Probe": "second"]])
            #expect(second.task.string("cacheStatus") == "revalidated")
            #expect(second.task.value(at: "response.statusCode") as? Int == 200)
            #expect(second.task.value(at: "response.mimeType") as? String == "application/json")
            // The body is the stored one: it echoes the first request, not the second.
            #expect(try Self.echoedProbe(second.body) == "first")
            #expect(try await Self.statuses(in: log, for: target) == [200, 304])
        }
    }

    @Test func httpbinEtagIsRevalidatedWithIfNoneMatch() async throws {
        let httpbin = try Peers.httpbin()
        let log = try Peers.httpbinLog()
        let etag = "tag-\(UUID().uuidString)"
        let target = "/etag/\(etag)"
        try await DaemonFixture.with { daemon in
            let first = try await daemon.fetch(httpbin + target, ["headers": ["X-Probe": "first"]])
            #expect(first.task.string("cacheStatus") == "network")
            #expect(first.task.value(at: "response.headers.ETag") as? String == etag)
            let second = try await daemon.fetch(httpbin + target, ["headers": ["X-Probe": "second"]])
            #expect(second.task.string("cacheStatus") == "revalidated")
            #expect(try Self.echoedProbe(second.body) == "first")
            #expect(try await Self.statuses(in: log, for: target) == [200, 304])
        }
    }

    @Test func httpbinMaxAgeIsServedFreshAndNoStoreIsNot() async throws {
        let httpbin = try Peers.httpbin()
        let log = try Peers.httpbinLog()
        let fresh = "/cache/600?probe=\(UUID().uuidString)"
        let uncached = "/response-headers?Cache-Control=no-store&probe=\(UUID().uuidString)"
        try await DaemonFixture.with { daemon in
            let first = try await daemon.cacheStatus(httpbin + fresh)
            #expect(first == "network")
            #expect(try await daemon.cacheStatus(httpbin + fresh) == "cache")
            #expect(try await daemon.cacheStatus(httpbin + uncached) == "network")
            #expect(try await daemon.cacheStatus(httpbin + uncached) == "network")
            #expect(try await Self.statuses(in: log, for: uncached) == [200, 200])
            #expect(try await Self.statuses(in: log, for: fresh) == [200], "the fresh response reached httpbin again")
        }
    }
}
