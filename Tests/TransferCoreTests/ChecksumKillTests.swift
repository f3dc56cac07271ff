import Foundation
import Glibc
import TestSupport
import Testing

/// Checksums across a crash (issue 15): a background download with a `checksum`, killed with
/// SIGKILL after its first checkpoint (the real executable, restarted on the same data folder),
/// continues with a range from the checkpoint and still verifies the whole file: the restarted
/// daemon has no hash state, so it reads the kept prefix back. A wrong checksum fails it then,
/// with no file left.
@Suite struct ChecksumKillTests {
    static let size = 6 << 20
    static let json = ["Content-Type": "application/json"]

    @Test(arguments: [false, true])
    func aDownloadResumedAfterKillNineVerifiesTheWholeFile(wrongChecksum: Bool) async throws {
        let resource = GeneratedBytes(count: Self.size, seed: 15)
        let origin = try StreamingOrigin(resource: resource, etag: "\"checksum-kill\"", bytesPerSecond: 1 << 20)
        defer { origin.stop() }
        let folder = try TempDirectory(prefix: "transferd-checksum-kill")
        defer { folder.remove() }
        let expected = resource.sha256()
        let checksum = "sha-256=" + (wrongChecksum ? String(repeating: "0", count: 64) : expected)

        let first = try await DaemonProcess.start(dataDirectory: folder.path)
        var second: DaemonProcess?
        defer {
            for daemon in [first, second].compactMap({ $0 }) where daemon.process.isRunning { daemon.kill(SIGKILL) }
        }
        let client = TestHTTPClient(port: first.port)
        let session = try await send(client, "POST", "/v1/sessions", #"{"kind": "background", "identifier": "checksum-kill"}"#, status: 201)
        let sessionId = try #require(session["id"] as? String)
        let task = try await send(client, "POST", "/v1/sessions/\(sessionId)/tasks",
                                  #"{"kind": "download", "destination": "kill.bin", "checksum": "\#(checksum)", "request": {"url": "\#(origin.url("/kill.bin"))"}}"#, status: 201)
        let id = try #require(task["id"] as? Int)
        // Two seconds in at 1 MiB/s: past the engine's first checkpoint (about one a second).
        try await pollTask(client, id, timeout: 20) { (($0["progress"] as? [String: Any])?["bytesReceived"] as? Int ?? 0) >= 2 << 20 }
        first.kill(SIGKILL)
        try #require(await first.waitForExit(timeout: 10) != nil)

        second = try await DaemonProcess.start(dataDirectory: folder.path)
        let secondClient = TestHTTPClient(port: try #require(second).port)
        origin.setRate(nil)
        try await pollTask(secondClient, id, timeout: 60) { ($0["state"] as? String) == "completed" }
        let done = try await send(secondClient, "GET", "/v1/tasks/\(id)", status: 200)
        #expect(done["checksum"] as? String == checksum, "\(done)")

        // The restarted daemon went on from the checkpoint with a range: the prefix was not
        // received again, so its digest came from reading the file back.
        let responses = origin.responses
        let resumedAt = responses.dropFirst().first?.offset ?? 0
        try #require(responses.count == 2 && responses[1].status == 206 && resumedAt > 0, "not resumed from a checkpoint: \(responses)")

        let destination = folder.path + "/downloads/kill.bin"
        if wrongChecksum {
            let error = try #require(done["error"] as? [String: Any], "\(done)")
            #expect(error["code"] as? Int == -1011)
            #expect((error["message"] as? String)?.contains("got sha-256=\(expected)") == true, "\(error)")
            #expect(!FileManager.default.fileExists(atPath: destination))
            #expect(done["location"] is NSNull)
        } else {
            #expect(done["error"] is NSNull, "\(done)")
            #expect((done["digest"] as? [String: Any])?["sha-256"] as? String == expected, "\(done)")
            #expect(done["location"] as? String == destination)
            #expect(try sha256(ofFile: destination) == expected)
        }
        let partial = (try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/partial")) ?? []
        #expect(partial.isEmpty, "partial files left: \(partial)")
    }

    private func send(_ client: TestHTTPClient, _ method: String, _ path: String, _ json: String? = nil, status: Int) async throws -> [String: Any] {
        let response = try await client.sendAsync(method, path, headers: json == nil ? [:] : Self.json, body: json.map { Data($0.utf8) })
        try #require(response.status == status, "\(method) \(path): \(response)")
        return try response.jsonObject()
    }
}
