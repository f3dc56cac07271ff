import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 15, item 3: the real executable killed with SIGKILL while a background session sends a
/// blob body and a file body to a slow receiver, restarted on the same data folder. Both uploads
/// start again from their first byte by themselves (the receiver keeps the cut bodies, as real
/// servers do) and the last request of each is the whole body, byte for byte. A client-streamed
/// upload killed mid-body cannot be sent again: in a background session as in a default one, it
/// fails with networkConnectionLost and says why.
@Suite struct BackgroundUploadKillTests {
    static let size = 2 << 20
    private static let json = ["Content-Type": "application/json"]

    private func send(_ client: TestHTTPClient, _ method: String, _ path: String, _ json: String? = nil, body: Data? = nil, status: Int) async throws -> [String: Any] {
        let headers = json != nil ? Self.json : ["Content-Type": "application/octet-stream"]
        let response = try await client.sendAsync(method, path, headers: headers, body: json.map { Data($0.utf8) } ?? body, timeout: 60)
        try #require(response.status == status, "\(method) \(path): \(response)")
        return try response.jsonObject()
    }

    private static func bytes(seed: UInt64) -> Data {
        let generated = GeneratedBytes(count: size, seed: seed)
        var data = Data(count: size)
        data.withUnsafeMutableBytes { generated.fill($0, from: 0) }
        return data
    }

    @Test func aBackgroundUploadKilledMidBodyIsSentAgainWholeAfterTheRestart() async throws {
        let blobBody = Self.bytes(seed: 31)
        let fileBody = Self.bytes(seed: 32)
        // 256 KiB/s a body: eight seconds each, so the kill lands mid-body.
        let sink = try UploadSink(bytesPerSecond: 256 * 1024)
        defer { sink.stop() }
        let folder = try TempDirectory(prefix: "transferd-upload-kill")
        defer { folder.remove() }
        let uploads = folder.path + "/uploads"
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        try fileBody.write(to: URL(fileURLWithPath: uploads + "/file.bin"))
        let arguments = ["--uploads-dir", uploads]

        let first = try await DaemonProcess.start(dataDirectory: folder.path + "/data", arguments: arguments)
        var client = TestHTTPClient(port: first.port)
        let blobId = try #require(try await send(client, "POST", "/v1/blobs", body: blobBody, status: 201)["id"] as? String)
        let session = try #require(try await send(client, "POST", "/v1/sessions", #"{"kind": "background", "identifier": "upload-kill"}"#, status: 201)["id"] as? String)
        var ids: [String: Int] = [:]
        for (name, body) in [("blob", #"{"blob": "\#(blobId)"}"#), ("file", #"{"file": "file.bin"}"#)] {
            let task = try await send(client, "POST", "/v1/sessions/\(session)/tasks", #"""
                {"kind": "upload", "request": {"url": "\#(sink.url("/\(name).bin"))", "method": "PUT", "body": \#(body)}}
                """#, status: 201)
            ids[name] = try #require(task["id"] as? Int)
        }
        // A client-streamed upload in the background session and one in a default session.
        let plain = try #require(try await send(client, "POST", "/v1/sessions", #"{"kind": "default"}"#, status: 201)["id"] as? String)
        var streamedIds: [Int] = []
        for (owner, path) in [(session, "/streamed.bin"), (plain, "/streamed-default.bin")] {
            let streamed = try await send(client, "POST", "/v1/sessions/\(owner)/tasks", #"""
                {"kind": "upload", "request": {"url": "\#(sink.url(path))", "method": "PUT", "body": {"stream": true}}}
                """#, status: 201)
            let id = try #require(streamed["id"] as? Int)
            _ = try await client.sendAsync("POST", "/v1/tasks/\(id)/body-chunks", headers: ["Content-Type": "application/octet-stream"], body: Data(repeating: 7, count: 64 * 1024))
            streamedIds.append(id)
        }

        // Kill once both bodies are well under way and the streamed ones have reached the receiver.
        let midway = await sink.wait(timeout: .seconds(20)) { requests in
            ["/blob.bin", "/file.bin"].allSatisfy { path in requests.contains { $0.path == path && $0.body.count >= 512 * 1024 } }
                && ["/streamed.bin", "/streamed-default.bin"].allSatisfy { path in requests.contains { $0.path == path } }
        }
        try #require(midway, "the uploads did not get under way: \(sink.requests)")
        for id in ids.values + streamedIds {
            let task = try await send(client, "GET", "/v1/tasks/\(id)", status: 200)
            try #require(task["state"] as? String == "running", "task \(id) is not mid-transfer at the kill: \(task)")
        }
        first.kill(SIGKILL)
        try #require(await first.waitForExit(timeout: 10) == SIGKILL)
        // Still slow until the receiver saw the dead connections end: the bytes the kernel holds
        // for them must not rush in and make a cut body look whole.
        let noticed = await sink.wait(timeout: .seconds(20)) { requests in requests.allSatisfy(\.ended) }
        try #require(noticed, "the receiver did not see the connections end: \(sink.requests)")
        sink.setRate(nil)

        let second = try await DaemonProcess.start(dataDirectory: folder.path + "/data", arguments: arguments)
        defer { second.terminate() }
        client = TestHTTPClient(port: second.port)
        for (name, expected) in [("blob", blobBody), ("file", fileBody)] {
            let id = try #require(ids[name])
            let done = try await pollTask(client, id, timeout: 60) { ($0["state"] as? String) == "completed" }
            #expect(done["error"] is NSNull, "\(name) upload \(id): \(done)")
            let received = sink.requests.filter { $0.path == "/\(name).bin" }
            // The first request was cut by the kill; the last one, sent after the restart, is whole.
            #expect(received.count >= 2 && received.first?.complete == false, "\(name): \(received)")
            let last = try #require(received.last)
            #expect(last.complete && last.body.count == expected.count && sha256(of: last.body) == sha256(of: expected),
                    "\(name): the receiver's last body is not the \(name) body: \(received)")
            let task = try await send(client, "GET", "/v1/tasks/\(id)", status: 200)
            #expect((task["response"] as? [String: Any])?["statusCode"] as? Int == 201, "\(name): \(task)")
        }
        for id in streamedIds {
            let failed = try await send(client, "GET", "/v1/tasks/\(id)", status: 200)
            let error = try #require(failed["error"] as? [String: Any], "\(failed)")
            #expect(failed["state"] as? String == "completed")
            #expect(error["name"] as? String == "networkConnectionLost", "\(error)")
            #expect((error["message"] as? String)?.contains("client-streamed") == true, "\(error)")
        }
        #expect(sink.requests.filter { $0.path.hasPrefix("/streamed") }.count == 2, "a streamed body was sent twice: \(sink.requests)")
    }
}
