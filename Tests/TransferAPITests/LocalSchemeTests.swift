import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// data: and file: URL tasks end to end: the same events and response fields as HTTP, bodies
/// and downloads byte-identical; file: off by default and confined to `--file-url-roots`, so a
/// path outside (absolute, `..`, a symlink pointing out) never yields a byte.
@Suite struct LocalSchemeTests {
    static let payload = Data(count: 200_000) { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    static let small = payload.prefix(4096)

    @Test func dataURLsServeDataAndDownloadTasksWithURLResponseFields() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let base64 = "data:application/octet-stream;base64," + Self.small.base64EncodedString()
            let data = try #require(try await daemon.dataTask(in: sid, ["url": base64]).int("id"))
            let task = try await daemon.waitForCompletion(data)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.value(at: "response.statusCode") as? Int == 0)
            #expect(task.value(at: "response.mimeType") as? String == "application/octet-stream")
            #expect(task.value(at: "response.textEncodingName") is NSNull)
            #expect(task.value(at: "response.expectedContentLength") as? Int == Self.small.count)
            #expect(try await daemon.body(data).body == Self.small)
            let types = try await daemon.allEvents(sid).filter { $0.int("taskId") == data }.compactMap { $0.string("type") }
            #expect(types == ["didReceiveResponse", "didReceiveData", "didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")

            let text = try #require(try await daemon.dataTask(in: sid, ["url": "data:,caf%C3%A9%20au%20lait"]).int("id"))
            let textTask = try await daemon.waitForCompletion(text)
            #expect(textTask.value(at: "response.mimeType") as? String == "text/plain")
            #expect(textTask.value(at: "response.textEncodingName") as? String == "US-ASCII")
            #expect(textTask.value(at: "response.expectedContentLength") as? Int == 13)
            #expect(try await daemon.body(text).text == "café au lait")

            let download = try #require(try await daemon.downloadTask(in: sid, ["url": base64], destination: "from-data.bin").int("id"))
            let downloaded = try await daemon.waitForCompletion(download)
            #expect(downloaded.isNull("error"), "\(downloaded["error"] ?? "")")
            let location = try #require(downloaded.string("location"))
            #expect(location.hasSuffix("/downloads/from-data.bin"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == Self.small)
            let downloadTypes = try await daemon.allEvents(sid).filter { $0.int("taskId") == download }.compactMap { $0.string("type") }
            #expect(downloadTypes == ["didReceiveResponse", "didWriteData", "didFinishDownloadingTo", "didFinishCollectingMetrics", "didCompleteWithError"], "\(downloadTypes)")
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)

            let malformed = try #require(try await daemon.dataTask(in: sid, ["url": "data:;base64,a*bc"]).int("id"))
            let failed = try await daemon.waitForCompletion(malformed)
            #expect(failed.value(at: "error.code") as? Int == -1000)
            #expect(try await daemon.body(malformed).status == 409)
        }
    }

    /// A data: URL may be 1 MiB long (other URLs 8192 bytes), so it carries about 768 KiB.
    @Test func aDataURLUpToOneMebibyteCarriesItsBodyAndALongerOneIsRefused() async throws {
        let big = Data(count: 786_000) { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let url = "data:application/octet-stream;base64," + big.base64EncodedString()
        #expect(url.utf8.count <= 1 << 20 && url.utf8.count > (1 << 20) - 1000)
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let data = try #require(try await daemon.dataTask(in: sid, ["url": url]).int("id"))
            let task = try await daemon.waitForCompletion(data)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.value(at: "response.expectedContentLength") as? Int == big.count)
            #expect(try await daemon.body(data).body == big)
            let download = try #require(try await daemon.downloadTask(in: sid, ["url": url]).int("id"))
            let location = try #require(try await daemon.waitForCompletion(download).string("location"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == big)

            let before = try await daemon.get("/v1/sessions/\(sid)/tasks").body
            let tooLong = [
                ("data:;base64," + String(repeating: "A", count: (1 << 20) - 12), 1 << 20),
                ("http://127.0.0.1/" + String(repeating: "a", count: 8192 - 16), 8192),
            ]
            for (url, limit) in tooLong {
                let refused = try await daemon.post("/v1/sessions/\(sid)/tasks", json: ["kind": "data", "request": ["url": url]])
                #expect(refused.status == 422, "\(url.utf8.count) bytes: \(refused.status)")
                let error = try refused.object().object("error")
                #expect(error?.string("code") == "invalid_url" && error?.string("field") == "request.url", "\(error ?? [:])")
                #expect(error?.string("message")?.contains("longer than \(limit) bytes") == true, "\(error ?? [:])")
            }
            #expect(try await daemon.get("/v1/sessions/\(sid)/tasks").body == before, "a refused task was stored")
        }
    }

    @Test func fileURLsAreRefusedUnlessRootsAreConfigured() async throws {
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.dataTask(["url": "file:///etc/passwd"]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.value(at: "error.code") as? Int == -1002)
            #expect(task.value(at: "progress.bytesReceived") as? Int == 0)
            let body = try await daemon.body(id)
            #expect(body.status == 409 && !body.text.contains("root:"), "\(body)")
        }
    }

    @Test func fileURLsInsideARootAreByteIdenticalAndNothingOutsideIsRead() async throws {
        let root = try TempDirectory(prefix: "transferd-file-root")
        defer { root.remove() }
        let outside = try TempDirectory(prefix: "transferd-file-outside")
        defer { outside.remove() }
        try FileManager.default.createDirectory(at: root.file("in"), withIntermediateDirectories: true)
        try Self.payload.write(to: root.file("in/payload.bin"))
        try Data("secret".utf8).write(to: outside.file("secret.txt"))
        try FileManager.default.createSymbolicLink(atPath: root.file("escape.txt").path, withDestinationPath: outside.file("secret.txt").path)
        try FileManager.default.createSymbolicLink(atPath: root.file("inner.bin").path, withDestinationPath: root.file("in/payload.bin").path)
        try await DaemonFixture.with(configure: { $0.service.fileURLRoots = [root.path] }) { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let inside = "file://" + root.file("in/payload.bin").path
            let data = try #require(try await daemon.dataTask(in: sid, ["url": inside]).int("id"))
            let task = try await daemon.waitForCompletion(data)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            #expect(task.value(at: "response.expectedContentLength") as? Int == Self.payload.count)
            #expect(task.value(at: "response.suggestedFilename") as? String == "payload.bin")
            #expect(try await daemon.body(data).body == Self.payload)

            // A symlink that stays inside the root is followed.
            let download = try #require(try await daemon.downloadTask(in: sid, ["url": "file://" + root.file("inner.bin").path]).int("id"))
            let downloaded = try await daemon.waitForCompletion(download)
            #expect(downloaded.isNull("error"), "\(downloaded["error"] ?? "")")
            let location = try #require(downloaded.string("location"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == Self.payload)
            let types = try await daemon.allEvents(sid).filter { $0.int("taskId") == download }.compactMap { $0.string("type") }
            #expect(types.first == "didReceiveResponse" && Array(types.suffix(3)) == ["didFinishDownloadingTo", "didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")

            let refused: [(String, Int)] = [
                ("file://" + root.path + "/../" + outside.url.lastPathComponent + "/secret.txt", -1102),
                ("file://" + root.path + "/in/..%2F..%2F" + outside.url.lastPathComponent + "/secret.txt", -1102),
                ("file://" + root.file("escape.txt").path, -1102),
                ("file://" + outside.file("secret.txt").path, -1102),
                ("file:///etc/passwd", -1102),
                ("file://" + root.file("in/missing.bin").path, -1100),
                ("file://" + root.file("in").path, -1101),
                ("file://otherhost" + root.file("in/payload.bin").path, -1002),
            ]
            for (url, code) in refused {
                for kind in ["data", "download"] {
                    let id = try #require(try await daemon.createTask(in: sid, ["kind": kind, "request": ["url": url]]).int("id"))
                    let failed = try await daemon.waitForCompletion(id)
                    #expect(failed.value(at: "error.code") as? Int == code, "\(kind) \(url): \(failed["error"] ?? "")")
                    #expect(failed.value(at: "progress.bytesReceived") as? Int == 0, "\(kind) \(url)")
                    #expect(failed.isNull("location"), "\(kind) \(url)")
                    let body = try await daemon.body(id)
                    #expect(body.status == 409 && !body.text.contains("secret") && !body.text.contains("root:"), "\(kind) \(url): \(body)")
                }
            }
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").allSatisfy { !$0.contains("secret") && !$0.contains("passwd") }, "\(FileSystemProbe.tree(daemon.dataPath + "/files"))")

            // Read-only: an upload to a file: URL fails without touching the file.
            let upload = try await daemon.post("/v1/sessions/\(sid)/tasks", json: [
                "kind": "upload", "request": ["url": inside, "method": "PUT", "body": ["base64": "eA=="]],
            ])
            let uploadId = try #require(try upload.object().int("id"), "\(upload)")
            #expect(try await daemon.waitForCompletion(uploadId).value(at: "error.code") as? Int == -1002)
            #expect(try Data(contentsOf: root.file("in/payload.bin")) == Self.payload)
        }
    }
}
