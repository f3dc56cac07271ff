import Foundation
import Glibc
import TestSupport
import Testing

/// Downloads across `kill -9` of the real executable: the partial file is synced and its offset
/// checkpointed about once a second, so a background session carries on from there by itself
/// and a default session reports the failure with resume data.
@Suite struct DownloadCrashTests {
    static let body = Data(count: 1 << 20) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
    static let etag = "\"crash-v1\""
    private static let json = ["Content-Type": "application/json"]

    /// The first request trickles (about 7.6 s); ranged requests are served at once.
    private static func origin() throws -> OriginServer {
        try OriginServer { request in
            if request.header("Range") != nil { return .ranged(body, for: request, headers: ["ETag": etag]) }
            return .slowBody(headers: ["ETag": etag], body: body, bytesPerWrite: 8 * 1024, interval: .milliseconds(60))
        }
    }

    private func send(_ client: TestHTTPClient, _ method: String, _ path: String, _ json: String? = nil, status: Int) async throws -> [String: Any] {
        let response = try await client.sendAsync(method, path, headers: json == nil ? [:] : Self.json, body: json.map { Data($0.utf8) })
        #expect(response.status == status, "\(method) \(path): \(response)")
        return try response.jsonObject()
    }

    private func received(_ snapshot: [String: Any]) -> Int { (snapshot["progress"] as? [String: Any])?["bytesReceived"] as? Int ?? 0 }

    /// Starts a download in a new session of `kind`, kills the daemon once it is well past a
    /// checkpoint, and restarts it on the same data folder.
    private func downloadAndKill(kind: String, folder: TempDirectory, origin: OriginServer) async throws -> (DaemonProcess, TestHTTPClient, Int) {
        let first = try await DaemonProcess.start(dataDirectory: folder.path)
        let client = TestHTTPClient(port: first.port)
        let session = try await send(client, "POST", "/v1/sessions", kind == "background" ? #"{"kind": "background", "identifier": "crash"}"# : "{}", status: 201)
        let sessionId = try #require(session["id"] as? String)
        let task = try await send(client, "POST", "/v1/sessions/\(sessionId)/tasks",
                                  #"{"kind": "download", "request": {"url": "\#(origin.url("/big.bin"))"}}"#, status: 201)
        let id = try #require(task["id"] as? Int)
        // Past 40 % (about 2 s in): at least one checkpoint synced and stored by then.
        _ = try await pollTask(client, id, timeout: 30) { received($0) >= Self.body.count * 2 / 5 }
        try await Task.sleep(for: .milliseconds(1200))
        first.kill(SIGKILL)
        #expect(await first.waitForExit(timeout: 10) != nil)
        let second = try await DaemonProcess.start(dataDirectory: folder.path)
        return (second, TestHTTPClient(port: second.port), id)
    }

    private func rangedOffsets(_ origin: OriginServer) -> [Int] {
        origin.requests.compactMap { request in
            request.header("Range").flatMap { Int($0.dropFirst("bytes=".count).prefix { $0.isNumber }) }
        }
    }

    @Test func aBackgroundDownloadCarriesOnFromItsCheckpointAfterKillNine() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let folder = try TempDirectory(prefix: "transferd-crash-bg")
        defer { folder.remove() }
        let (daemon, client, id) = try await downloadAndKill(kind: "background", folder: folder, origin: origin)
        defer { daemon.terminate() }
        let done = try await pollTask(client, id, timeout: 30) { ($0["state"] as? String) == "completed" }
        #expect(done["error"] is NSNull, "\(done)")
        let file = try await client.sendAsync("GET", "/v1/tasks/\(id)/file")
        #expect(file.status == 200)
        #expect(byteDifference(file.body, Self.body) == nil, "the resumed file is not the resource")
        // It went on from a checkpoint: one ranged request, past the start, and not past what
        // had arrived before the kill.
        let offsets = rangedOffsets(origin)
        #expect(offsets.count == 1, "ranged requests: \(offsets)")
        #expect((offsets.first ?? 0) > 0)
    }

    @Test func aDefaultDownloadFailsWithResumeDataAfterKillNineThatCompletesIt() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        let folder = try TempDirectory(prefix: "transferd-crash-default")
        defer { folder.remove() }
        let (daemon, client, id) = try await downloadAndKill(kind: "default", folder: folder, origin: origin)
        defer { daemon.terminate() }
        let failed = try await send(client, "GET", "/v1/tasks/\(id)", status: 200)
        let error = try #require(failed["error"] as? [String: Any], "\(failed)")
        #expect(error["code"] as? Int == -1005)
        let resumeData = try #require(error["resumeData"] as? String, "a checkpointed download must come back with resume data")
        let resumed = try await send(client, "POST", "/v1/sessions/\(try #require(failed["sessionId"] as? String))/tasks",
                                     #"{"kind": "download", "resumeData": "\#(resumeData)"}"#, status: 201)
        let resumedId = try #require(resumed["id"] as? Int)
        _ = try await pollTask(client, resumedId, timeout: 30) { ($0["state"] as? String) == "completed" }
        let file = try await client.sendAsync("GET", "/v1/tasks/\(resumedId)/file")
        #expect(file.status == 200)
        #expect(byteDifference(file.body, Self.body) == nil)
        #expect((rangedOffsets(origin).first ?? 0) > 0)
    }
}
