import Foundation
import Glibc
import TestSupport
import Testing

/// A segmented download across `kill -9` of the real executable (issue 18 item 2): its
/// checkpoint records every part's synced offset, so a background session carries each part
/// on from its own offset, not only from the bytes it holds from 0 without a gap.
@Suite struct SegmentedCrashTests {
    static let size = 8 * 1024 * 1024
    static let part = size / 4
    static let body = Data(count: size) { UInt8(truncatingIfNeeded: $0 &* 11 &+ $0 >> 13) }
    static let etag = "\"segments-v1\""

    /// Every answer trickles (16 KiB every 40 ms per connection, about 0.4 MB/s; the whole in
    /// about 5 s over four), so each of the four parts is part-way when the daemon is killed.
    private static func origin() throws -> OriginServer {
        try OriginServer { request in
            guard case .respond(let status, var headers, let bytes) = OriginBehavior.ranged(body, for: request, headers: ["ETag": etag]) else {
                return .respond(status: 500)
            }
            headers["Content-Length"] = nil
            return .slowBody(status: status, headers: headers, body: bytes, bytesPerWrite: 16 * 1024, interval: .milliseconds(60))
        }
    }

    private func send(_ client: TestHTTPClient, _ method: String, _ path: String, _ json: String, status: Int) async throws -> [String: Any] {
        let response = try await client.sendAsync(method, path, headers: ["Content-Type": "application/json"], body: Data(json.utf8))
        #expect(response.status == status, "\(method) \(path): \(response)")
        return try response.jsonObject()
    }

    private func rangeStarts(_ requests: ArraySlice<OriginRequest>) -> [Int] {
        requests.compactMap { $0.header("Range").flatMap { Int($0.dropFirst("bytes=".count).prefix { $0.isNumber }) } }
    }

    @Test func everyPartCarriesOnFromItsOwnOffsetAfterKillNine() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let folder = try TempDirectory(prefix: "transferd-crash-segments")
        defer { folder.remove() }
        let first = try await DaemonProcess.start(dataDirectory: folder.path)
        let client = TestHTTPClient(port: first.port)
        let session = try await send(client, "POST", "/v1/sessions", #"{"kind": "background", "identifier": "segments"}"#, status: 201)
        let sessionId = try #require(session["id"] as? String)
        let task = try await send(client, "POST", "/v1/sessions/\(sessionId)/tasks",
                                  #"{"kind": "download", "segments": 4, "request": {"url": "\#(origin.url("/big.bin"))"}}"#, status: 201)
        let id = try #require(task["id"] as? Int)
        // Past 30 % of the whole (all parts counted), then a checkpoint's time.
        _ = try await pollTask(client, id, timeout: 30) { (($0["progress"] as? [String: Any])?["bytesReceived"] as? Int ?? 0) >= Self.size * 3 / 10 }
        try await Task.sleep(for: .milliseconds(1200))
        first.kill(SIGKILL)
        #expect(await first.waitForExit(timeout: 10) != nil)
        let before = origin.requests.count
        let second = try await DaemonProcess.start(dataDirectory: folder.path)
        defer { second.terminate() }
        let secondClient = TestHTTPClient(port: second.port)
        let done = try await pollTask(secondClient, id, timeout: 60) { ($0["state"] as? String) == "completed" }
        #expect(done["error"] is NSNull, "\(done)")
        let file = try await secondClient.sendAsync("GET", "/v1/tasks/\(id)/file")
        #expect(file.status == 200)
        let same = file.body == Self.body  // not in #expect, which would diff 8 MiB on a failure
        #expect(same, "the resumed file is not the resource (\(file.body.count) bytes)")
        // After the restart, the parts past the first went on from inside themselves: ranged
        // requests that start neither at 0 nor at a part's first byte, beyond the first part.
        let starts = rangeStarts(origin.requests.dropFirst(before))
        #expect(starts.contains { $0 > Self.part && $0 % Self.part != 0 }, "ranges after the restart: \(starts)")
        #expect(!origin.requests.dropFirst(before).contains { $0.header("Range") == nil }, "the restart fetched the resource from 0 again")
    }
}
