import Foundation
import Glibc
import TestSupport
import Testing

/// A tus upload across `kill -9` of the real executable: the upload URL is stored with the task,
/// so after a restart the task asks the server for its offset (HEAD) and sends only the rest, in
/// background and default sessions alike (the server holds the upload's state).
@Suite struct TusCrashTests {
    static let body = Data(count: 4 << 20) { UInt8(truncatingIfNeeded: $0 &* 11 &+ $0 >> 13) }
    private static let json = ["Content-Type": "application/json"]

    private func send(_ client: TestHTTPClient, _ method: String, _ path: String, _ json: String? = nil, body: Data? = nil, status: Int) async throws -> [String: Any] {
        let headers = json != nil ? Self.json : ["Content-Type": "application/octet-stream"]
        let response = try await client.sendAsync(method, path, headers: headers, body: json.map { Data($0.utf8) } ?? body, timeout: 60)
        #expect(response.status == status, "\(method) \(path): \(response)")
        return try response.jsonObject()
    }

    @Test(arguments: ["background", "default"])
    func aTusUploadCarriesOnFromTheServersOffsetAfterKillNine(sessionKind: String) async throws {
        // The first PATCH is read at 512 KiB/s (about 8 s for the body); later ones at once.
        let server = try TusServer { request in
            request.method == "PATCH" && request.header("Upload-Offset") == "0" ? .throttle(bytesPerSecond: 512 * 1024) : .none
        }
        defer { server.stop() }
        let folder = try TempDirectory(prefix: "transferd-crash-tus")
        defer { folder.remove() }

        let first = try await DaemonProcess.start(dataDirectory: folder.path)
        var client = TestHTTPClient(port: first.port)
        let blob = try await send(client, "POST", "/v1/blobs", body: Self.body, status: 201)
        let blobId = try #require(blob["id"] as? String)
        let session = try await send(client, "POST", "/v1/sessions", sessionKind == "background" ? #"{"kind": "background", "identifier": "tus-crash"}"# : "{}", status: 201)
        let sessionId = try #require(session["id"] as? String)
        let task = try await send(client, "POST", "/v1/sessions/\(sessionId)/tasks", #"""
            {"kind": "upload", "resumable": "tus", "request": {"url": "\#(server.creationURL)", "method": "POST", "body": {"blob": "\#(blobId)"}}}
            """#, status: 201)
        let id = try #require(task["id"] as? Int)
        // A quarter on the server (about 2 s in), and the upload URL stored long since.
        #expect(await server.wait { uploads, _ in (uploads.first?.data.count ?? 0) >= Self.body.count / 4 })
        try await Task.sleep(for: .milliseconds(1200))
        first.kill(SIGKILL)
        #expect(await first.waitForExit(timeout: 10) != nil)
        // The server notices the dead connection and keeps what arrived.
        #expect(await server.wait { _, exchanges in exchanges.contains { $0.method == "PATCH" } })
        let kept = server.exchanges.first { $0.method == "PATCH" }?.bodyBytesKept ?? 0

        let second = try await DaemonProcess.start(dataDirectory: folder.path)
        defer { second.terminate() }
        client = TestHTTPClient(port: second.port)
        _ = try await pollTask(client, id, timeout: 60) { ($0["state"] as? String) == "completed" }
        let done = try await send(client, "GET", "/v1/tasks/\(id)", status: 200)
        #expect(done["error"] is NSNull, "\(done)")
        #expect(server.uploads.count == 1, "the restart must continue the upload, not make a new one")
        #expect(byteDifference(server.uploads.first?.data ?? Data(), Self.body) == nil, "the server's bytes are not the body")
        #expect(server.exchanges.map(\.method) == ["POST", "PATCH", "HEAD", "PATCH"], "\(server.exchanges)")
        let resumedAt = server.exchanges.last?.uploadOffset ?? -1
        #expect(kept > 0 && resumedAt == kept, "resumed at \(resumedAt), the server had \(kept)")
        let resumable = try #require(done["resumable"] as? [String: Any])
        #expect(resumable["offset"] as? Int == Self.body.count)
    }
}
