import LibCrypto
import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Resumable uploads with tus 1.0.0 (`"resumable": "tus"`) against the in-process `TusServer`:
/// creation with POST, the body with PATCH, and after a cut or a stall a HEAD for the server's
/// offset and a PATCH from there, never from zero.
@Suite struct TusUploadTests {
    /// 6 MiB that differ from byte to byte, so a misplaced offset shows in the digest.
    static let payload = Data(count: 6 << 20) { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    private func blob(_ daemon: DaemonFixture, _ data: Data) async throws -> String {
        let response = try await daemon.request("POST", "/v1/blobs", body: data, headers: ["Content-Type": "application/octet-stream"], timeout: 120)
        try #require(response.status == 201, "blob: \(response)")
        return try #require(try response.object().string("id"))
    }

    /// Creates a tus upload task of `body` to `server` and waits for it to complete.
    private func tusUpload(_ daemon: DaemonFixture, _ server: TusServer, body: [String: Any], request extra: [String: Any] = [:], timeout: Double = 60) async throws -> [String: Any] {
        var request: [String: Any] = ["url": server.creationURL, "method": "POST", "body": body]
        request.merge(extra) { $1 }
        let created = try await daemon.createTask(["kind": "upload", "resumable": "tus", "request": request])
        #expect(created.object("resumable")?.string("protocol") == "tus", "\(created)")
        return try await daemon.waitForCompletion(try #require(created.int("id")), timeout: timeout)
    }

    private func methods(_ server: TusServer) -> [String] { server.exchanges.map(\.method) }

    @Test func aBlobArrivesWholeWithOnePostAndOnePatch() async throws {
        let server = try TusServer()
        defer { server.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await tusUpload(daemon, server, body: ["blob": try await blob(daemon, Self.payload)])
            let taskId = try #require(task.int("id"))
            #expect(task.object("error") == nil, "\(task)")
            #expect(task.object("response")?.int("statusCode") == 204)
            #expect(task.value(at: "response.headers.Upload-Offset") as? String == String(Self.payload.count))
            let upload = try #require(server.uploads.first)
            #expect(server.uploads.count == 1)
            #expect(upload.length == Self.payload.count)
            #expect(sha256(of: upload.data) == sha256(of: Self.payload), "the server's bytes are not the blob")
            #expect(methods(server) == ["POST", "PATCH"], "\(server.exchanges)")
            let patch = try #require(server.exchanges.last)
            #expect(patch.uploadOffset == 0)
            #expect(patch.header("Content-Type") == "application/offset+octet-stream")
            #expect(patch.header("Tus-Resumable") == "1.0.0")
            #expect(server.exchanges.first?.header("Upload-Length") == String(Self.payload.count))
            // The relative Location is resolved against the creation URL.
            let resumable = try #require(task.object("resumable"))
            #expect(resumable.string("uploadURL") == "http://127.0.0.1:\(server.port)/files/\(upload.id)")
            #expect(resumable.int("offset") == Self.payload.count)
            #expect(task.object("progress")?.int("bytesSent") == Self.payload.count)
            let events = try await daemon.allEvents("shared").filter { $0.int("taskId") == taskId }
            #expect(events.last(where: { $0.string("type") == "didSendBodyData" })?.int("totalBytesSent") == Self.payload.count)
            #expect(events.filter { $0.string("type") == "didReceiveResponse" }.count == 1, "only the last PATCH's response is the task's")
            #expect(!events.contains { $0.string("type") == "didResumeUpload" })
        }
    }

    @Test func anInlineTextBodyAndAFilesNameGoAsTusToo() async throws {
        let root = try TempDirectory(prefix: "transferd-tus-uploads")
        defer { root.remove() }
        let fileBytes = Data(count: 300_000) { UInt8(truncatingIfNeeded: $0 &* 7) }
        try fileBytes.write(to: root.file("report.bin"))
        let server = try TusServer()
        defer { server.stop() }
        try await DaemonFixture.with(configure: { $0.service.uploadsDirectory = root.path }) { daemon in
            let text = try await tusUpload(daemon, server, body: ["text": "hello, tus"])
            #expect(text.object("error") == nil, "\(text)")
            #expect(server.uploads.first?.data == Data("hello, tus".utf8))
            let file = try await tusUpload(daemon, server, body: ["file": "report.bin"])
            #expect(file.object("error") == nil, "\(file)")
            let upload = try #require(server.uploads.last)
            #expect(upload.data == fileBytes)
            #expect(upload.metadata["filename"] == .some("report.bin"), "\(upload.metadata)")
        }
    }

    @Test func aPatchCutMidBodyResumesFromTheServersOffset() async throws {
        let cut = 2_500_000
        let server = try TusServer { request in
            request.method == "PATCH" && request.header("Upload-Offset") == "0" ? .cutAfter(bytes: cut) : .none
        }
        defer { server.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await tusUpload(daemon, server, body: ["blob": try await blob(daemon, Self.payload)])
            let taskId = try #require(task.int("id"))
            #expect(task.object("error") == nil, "\(task)")
            let upload = try #require(server.uploads.first)
            #expect(server.uploads.count == 1, "a cut must not start a new upload")
            #expect(sha256(of: upload.data) == sha256(of: Self.payload))
            #expect(methods(server) == ["POST", "PATCH", "HEAD", "PATCH"], "\(server.exchanges)")
            let patches = server.exchanges.filter { $0.method == "PATCH" }
            #expect(patches.first?.status == nil && patches.first?.bodyBytesKept == cut, "\(patches)")
            // Resumed where the server stood, not from zero, and nothing sent twice.
            #expect(patches.last?.uploadOffset == cut)
            #expect(patches.last?.header("Content-Length") == String(Self.payload.count - cut))
            #expect(patches.map(\.bodyBytesKept).reduce(0, +) == Self.payload.count)
            #expect(task.object("resumable")?.int("offset") == Self.payload.count)
            #expect(task.object("progress")?.int("bytesSent") == Self.payload.count)
            let resumed = try await daemon.allEvents("shared").filter { $0.int("taskId") == taskId && $0.string("type") == "didResumeUpload" }
            #expect(resumed.count == 1)
            #expect(resumed.first?.int("offset") == cut)
            #expect(resumed.first?.int("totalBytesExpectedToSend") == Self.payload.count)
            #expect(resumed.first?.string("uploadURL") == task.object("resumable")?.string("uploadURL"))
        }
    }

    @Test func aStalledPatchTimesOutAndResumesFromTheServersOffset() async throws {
        let stall = 1 << 20
        let server = try TusServer { request in
            request.method == "PATCH" && request.header("Upload-Offset") == "0" ? .stallAfter(bytes: stall) : .none
        }
        defer { server.stop() }
        try await DaemonFixture.with { daemon in
            let start = ContinuousClock.now
            let task = try await tusUpload(daemon, server, body: ["blob": try await blob(daemon, Self.payload)], request: ["timeoutInterval": 1])
            #expect(task.object("error") == nil, "\(task)")
            #expect(seconds(since: start) < 20)
            #expect(sha256(of: try #require(server.uploads.first).data) == sha256(of: Self.payload))
            #expect(methods(server) == ["POST", "PATCH", "HEAD", "PATCH"], "\(server.exchanges)")
            #expect(server.exchanges.last?.uploadOffset == stall)
        }
    }

    @Test func anUploadTheServerLostStartsOverWithANewOne() async throws {
        // The first PATCH is cut; the HEAD after it finds the upload gone (404): a new one is made.
        let server = try TusServer { request in
            if request.method == "PATCH" && request.path.hasSuffix("/u1") { return .cutAfter(bytes: 100_000) }
            if request.method == "HEAD" { return .status(404) }
            return .none
        }
        defer { server.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await tusUpload(daemon, server, body: ["base64": Data(Self.payload.prefix(1 << 20)).base64EncodedString()])
            #expect(task.object("error") == nil, "\(task)")
            #expect(methods(server) == ["POST", "PATCH", "HEAD", "POST", "PATCH"], "\(server.exchanges)")
            #expect(server.exchanges.last?.uploadOffset == 0)
            #expect(server.uploads.last?.data == Self.payload.prefix(1 << 20))
            #expect(task.object("resumable")?.string("uploadURL")?.hasSuffix("/files/u2") == true)
        }
    }

    @Test func retriesAreBoundedAndTheFailureSaysWhy() async throws {
        // Every PATCH is cut after 64 KiB: the task gives up after TusUpload.maxFailures.
        let server = try TusServer { request in request.method == "PATCH" ? .cutAfter(bytes: 64 * 1024) : .none }
        defer { server.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await tusUpload(daemon, server, body: ["blob": try await blob(daemon, Self.payload)])
            let error = try #require(task.object("error"), "\(task)")
            #expect(error.int("code") == -1005, "\(error)")
            #expect(error.string("message")?.contains("failed 6 times") == true, "\(error)")
            let patches = server.exchanges.filter { $0.method == "PATCH" }
            #expect(patches.count == 6, "\(server.exchanges)")
            // Each attempt went on from the server's offset.
            #expect(patches.map { $0.uploadOffset ?? -1 } == (0..<6).map { $0 * 64 * 1024 })
            #expect(task.object("resumable")?.int("offset") == 5 * 64 * 1024, "the last offset the server confirmed")
        }
    }

    @Test func aCancelWhileWaitingToRetryEndsTheTask() async throws {
        // The PATCH is cut, then every HEAD answers 503: the task spends its time in backoffs.
        let server = try TusServer { request in
            if request.method == "PATCH" { return .cutAfter(bytes: 64 * 1024) }
            return request.method == "HEAD" ? .status(503) : .none
        }
        defer { server.stop() }
        try await DaemonFixture.with { daemon in
            let created = try await daemon.createTask(["kind": "upload", "resumable": "tus",
                                                       "request": ["url": server.creationURL, "method": "POST", "body": ["blob": try await blob(daemon, Self.payload)]]])
            let taskId = try #require(created.int("id"))
            _ = try await daemon.waitForTask(taskId) { $0.string("phase") == "retrying" }
            // Two HEADs answered: the next waits 1 s, so the cancel lands between steps.
            #expect(await server.wait { _, exchanges in exchanges.filter { $0.method == "HEAD" }.count >= 2 })
            #expect(try await daemon.post("/v1/tasks/\(taskId)/cancel").status == 200)
            let task = try await daemon.waitForCompletion(taskId, timeout: 10)
            #expect(task.object("error")?.int("code") == -999, "\(task)")
            #expect(task.object("resumable")?.string("uploadURL") != nil, "the upload URL stays on record")
        }
    }

    @Test func aServerOfAnotherTusVersionFailsClearly() async throws {
        let server = try TusServer { request in request.method == "POST" ? .status(412) : .none }
        defer { server.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await tusUpload(daemon, server, body: ["text": "x"])
            let error = try #require(task.object("error"), "\(task)")
            #expect(error.int("code") == -1011)
            #expect(error.string("message")?.contains("1.0.0") == true, "\(error)")
            #expect(methods(server) == ["POST"])
        }
    }

    @Test(arguments: [
        (#"{"kind": "download", "resumable": "tus", "request": {"url": "http://127.0.0.1:9/files/"}}"#, 422, "invalid_value", "resumable"),
        (#"{"kind": "data", "resumable": "tus", "request": {"url": "http://127.0.0.1:9/files/", "body": {"text": "x"}}}"#, 422, "invalid_value", "resumable"),
        (#"{"kind": "upload", "resumable": "zip", "request": {"url": "http://127.0.0.1:9/files/", "method": "POST", "body": {"text": "x"}}}"#, 422, "invalid_value", "resumable"),
        (#"{"kind": "upload", "resumable": "ietf", "request": {"url": "http://127.0.0.1:9/files/", "method": "POST", "body": {"text": "x"}}}"#, 422, "not_implemented", "resumable"),
        (#"{"kind": "upload", "resumable": 1, "request": {"url": "http://127.0.0.1:9/files/", "method": "POST", "body": {"text": "x"}}}"#, 400, "invalid_type", "resumable"),
        (#"{"kind": "upload", "resumable": "tus", "request": {"url": "http://127.0.0.1:9/files/", "method": "PUT", "body": {"text": "x"}}}"#, 422, "invalid_value", "request.method"),
    ])
    func badInputIsRefusedWithTheField(body: String, status: Int, code: String, field: String) async throws {
        try await DaemonFixture.with { daemon in
            let response = try await daemon.request("POST", "/v1/sessions/shared/tasks", body: Data(body.utf8), headers: ["Content-Type": "application/json"])
            #expect(response.status == status, "\(response)")
            #expect(response.errorCode == code, "\(response)")
            #expect(response.error?.string("field") == field, "\(response)")
        }
    }
}
