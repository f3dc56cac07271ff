import LibCrypto
import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Upload tasks: bodies held in the request (text, base64, json) or streamed from disk (a blob
/// uploaded ahead, a file under the uploads root), with any method, progress, and the response
/// returned as for data tasks.
@Suite struct UploadTests {
    /// An origin that answers every request with the SHA-256 and length of the body it received.
    private static func echoDigestOrigin() throws -> OriginServer {
        try OriginServer { request in
            let digest = HashFunction.sha256.hash(request.body).map { String(format: "%02x", $0) }.joined()
            return .text("\(request.method) \(request.body.count) \(digest)", status: 201)
        }
    }

    private func upload(_ daemon: DaemonFixture, url: String, method: String, body: [String: Any]) async throws -> [String: Any] {
        let created = try await daemon.createTask(["kind": "upload", "request": ["url": url, "method": method, "body": body]])
        return try await daemon.waitForCompletion(try #require(created.int("id")))
    }

    private func blob(_ daemon: DaemonFixture, _ data: Data) async throws -> String {
        let response = try await daemon.request("POST", "/v1/blobs", body: data, headers: ["Content-Type": "application/octet-stream"], timeout: 120)
        #expect(response.status == 201, "blob: \(response)")
        return try #require(try response.object().string("id"))
    }

    @Test(arguments: [
        ("text", "hello, upload", Data("hello, upload".utf8)),
        ("base64", "AAEC/w==", Data([0, 1, 2, 255])),
    ])
    func inlineBodiesAreSentExactly(form: String, value: String, expected: Data) async throws {
        let body: [String: Any] = [form: value]
        let origin = try Self.echoDigestOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let task = try await upload(daemon, url: origin.url("/in"), method: "POST", body: body)
            #expect(task.object("error") == nil)
            #expect(task.object("response")?.int("statusCode") == 201)
            #expect(try await daemon.body(try #require(task.int("id"))).text == "POST \(expected.count) \(sha256(of: expected))")
            #expect(task.object("progress")?.int("bytesSent") == expected.count)
        }
    }

    @Test(arguments: ["POST", "PUT", "PATCH"])
    func aBlobIsStreamedWithAnyMethod(method: String) async throws {
        let payload = Data(count: 8 << 20) { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 10) }
        let origin = try Self.echoDigestOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try await blob(daemon, payload)
            let task = try await upload(daemon, url: origin.url("/blob"), method: method, body: ["blob": id])
            let taskId = try #require(task.int("id"))
            #expect(task.object("error") == nil, "\(task)")
            #expect(try await daemon.body(taskId).text == "\(method) \(payload.count) \(sha256(of: payload))")
            #expect(task.object("originalRequest")?.int("bodyLength") == payload.count)
            #expect(task.object("progress")?.int("bytesSent") == payload.count)
            #expect(task.object("progress")?.int("bytesExpectedToSend") == payload.count)
            let sent = try await daemon.allEvents("shared").filter { $0.int("taskId") == taskId && $0.string("type") == "didSendBodyData" }
            #expect(sent.last?.int("totalBytesSent") == payload.count)
            #expect(sent.compactMap { $0.int("bytesSent") }.reduce(0, +) == payload.count)
        }
    }

    @Test func aFileUnderTheUploadsRootIsStreamedAndPathsOutsideItAreRefused() async throws {
        let root = try TempDirectory(prefix: "transferd-uploads")
        defer { root.remove() }
        let outside = try TempDirectory(prefix: "transferd-outside")
        defer { outside.remove() }
        let payload = Data(count: 300_000) { UInt8(truncatingIfNeeded: $0) }
        try FileManager.default.createDirectory(at: root.file("in"), withIntermediateDirectories: true)
        try payload.write(to: root.file("in/payload.bin"))
        try Data("secret".utf8).write(to: outside.file("secret.txt"))
        try FileManager.default.createSymbolicLink(atPath: root.file("escape.txt").path, withDestinationPath: outside.file("secret.txt").path)
        let origin = try Self.echoDigestOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.uploadsDirectory = root.path }) { daemon in
            let task = try await upload(daemon, url: origin.url("/file"), method: "PUT", body: ["file": "in/payload.bin"])
            #expect(try await daemon.body(try #require(task.int("id"))).text == "PUT \(payload.count) \(sha256(of: payload))")
            for path in ["../\(outside.url.lastPathComponent)/secret.txt", "/etc/passwd", "escape.txt", "in/missing.bin", "in"] {
                let response = try await daemon.post("/v1/sessions/shared/tasks", json: [
                    "kind": "upload", "request": ["url": origin.url("/file"), "method": "PUT", "body": ["file": path]],
                ])
                #expect(response.status == 400, "\(path): \(response)")
                #expect(response.errorCode == "invalid_file", "\(path): \(response)")
                #expect(response.error?.string("field") == "request.body.file")
            }
            #expect(origin.requests.count == 1, "a refused file must never reach the network")
        }
    }

    @Test func anotherTokensBlobIsRefusedAndADeletedBlobFailsTheTask() async throws {
        let origin = try Self.echoDigestOrigin()
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.tokens = ["alice", "bob"] }, token: "alice") { daemon in
            let id = try await blob(daemon, Data("alice's".utf8))
            let refused = try await daemon.post("/v1/sessions/shared/tasks", json: [
                "kind": "upload", "request": ["url": origin.url("/x"), "method": "POST", "body": ["blob": id]],
            ], token: "bob")
            #expect(refused.status == 422)
            #expect(refused.error?.string("field") == "request.body.blob")

            // Created suspended, its blob deleted, then resumed: the task fails cleanly.
            let created = try await daemon.createTask(["kind": "upload", "state": "suspended",
                                                       "request": ["url": origin.url("/x"), "method": "POST", "body": ["blob": id]]])
            let taskId = try #require(created.int("id"))
            #expect(try await daemon.request("DELETE", "/v1/blobs/\(id)").status == 204)
            #expect(try await daemon.post("/v1/tasks/\(taskId)/resume").status == 200)
            let failed = try await daemon.waitForCompletion(taskId)
            #expect(failed.object("error")?.int("code") == -1100, "\(failed)")
            #expect(origin.requests.isEmpty)
        }
    }

    @Test func httpbinParsesAMultipartFormOfFieldsAndFilesFromEverySource() async throws {
        let httpbin = try Peers.httpbin()
        let root = try TempDirectory(prefix: "transferd-uploads-form")
        defer { root.remove() }
        try Data("file under the root".utf8).write(to: root.file("notes.txt"))
        try await DaemonFixture.with(configure: { $0.service.uploadsDirectory = root.path }) { daemon in
            let blob = try await blob(daemon, Data("blob contents".utf8))
            let task = try await daemon.createTask(["kind": "upload", "request": [
                "url": httpbin + "/post", "method": "POST",
                "headers": ["Content-Type": "text/plain"],  // replaced: a form's type carries its boundary
                "body": ["form": [
                    ["name": "title", "value": "héllo wörld"],
                    ["name": "count", "value": "3"],
                    ["name": "inline", "filename": "inline.txt", "base64": Data("inline bytes".utf8).base64EncodedString()],
                    ["name": "fromBlob", "filename": "b.txt", "contentType": "text/plain", "blob": blob],
                    ["name": "fromFile", "file": "notes.txt"],
                ]],
            ]])
            let id = try #require(task.int("id"))
            let sentType = task.object("originalRequest")?.object("headers")?.string("Content-Type") ?? ""
            #expect(sentType.hasPrefix("multipart/form-data; boundary=transferd-"))
            let done = try await daemon.waitForCompletion(id)
            #expect(done.object("response")?.int("statusCode") == 200, "\(done)")
            let echoed = try #require(try JSONSerialization.jsonObject(with: try await daemon.body(id).body) as? [String: Any])
            #expect(echoed["form"] as? [String: String] == ["title": "héllo wörld", "count": "3"])
            let files = try #require(echoed["files"] as? [String: String], "\(echoed)")
            #expect(files["fromBlob"] == "blob contents")
            #expect(files["fromFile"] == "file under the root")
            #expect(files["inline"] == "inline bytes")
            #expect(done.object("progress")?.int("bytesSent") == done.object("originalRequest")?.int("bodyLength"))
        }
    }

    /// A 307 keeps the method and the body: a blob's file is read again from its start.
    @Test func aRedirectThatKeepsTheMethodSendsABlobBodyAgain() async throws {
        let payload = Data(count: 300_000) { UInt8(truncatingIfNeeded: $0 &* 29 &+ 1) }
        let origin = try OriginServer { request in
            request.pathWithoutQuery == "/old"
                ? .respond(status: 307, headers: ["Location": "/new"])
                : .respond(status: 201, headers: ["X-Length": "\(request.body.count)"])
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try await blob(daemon, payload)
            let task = try await daemon.createTask(["kind": "upload", "request": ["url": origin.url("/old"), "method": "PUT", "body": ["blob": id]]])
            let done = try await daemon.waitForCompletion(try #require(task.int("id")))
            #expect(done.isNull("error"), "\(done["error"] ?? "")")
            #expect(done.value(at: "response.statusCode") as? Int == 201)
            #expect(origin.requests.map(\.path) == ["/old", "/new"])
            #expect(origin.requests.last?.body == payload)
        }
    }

    /// A body the client streams goes out chunked; a real WSGI server (gunicorn) reassembles it.
    @Test func httpbinSeesABodyTheClientStreamedInChunks() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let task = try await daemon.createTask(["kind": "upload", "request": [
                "url": httpbin + "/anything", "method": "POST", "headers": ["Content-Type": "text/plain"], "body": ["stream": true],
            ]])
            let id = try #require(task.int("id"))
            for part in ["sent ", "in ", "three chunks"] {
                let response = try await daemon.request("POST", "/v1/tasks/\(id)/body-chunks", body: Data(part.utf8), headers: ["Content-Type": "application/octet-stream"])
                #expect(response.status == 200, "\(response)")
            }
            #expect(try await daemon.post("/v1/tasks/\(id)/body-end").status == 200)
            let done = try await daemon.waitForCompletion(id)
            #expect(done.object("response")?.int("statusCode") == 200, "\(done)")
            let echoed = try JSONSerialization.jsonObject(with: try await daemon.body(id).body) as? [String: Any]
            #expect(echoed?["data"] as? String == "sent in three chunks", "\(echoed ?? [:])")
            #expect((echoed?["headers"] as? [String: Any])?["Transfer-Encoding"] as? String == "chunked")
        }
    }

    @Test func httpbinSeesTheStreamedBody() async throws {
        let httpbin = try Peers.httpbin()
        try await DaemonFixture.with { daemon in
            let id = try await blob(daemon, Data("streamed to httpbin".utf8))
            let task = try await daemon.createTask(["kind": "upload", "request": [
                "url": httpbin + "/anything", "method": "PUT", "headers": ["Content-Type": "text/plain"], "body": ["blob": id],
            ]])
            let done = try await daemon.waitForCompletion(try #require(task.int("id")))
            #expect(done.object("response")?.int("statusCode") == 200)
            let echoed = try JSONSerialization.jsonObject(with: try await daemon.body(try #require(task.int("id"))).body) as? [String: Any]
            #expect(echoed?["data"] as? String == "streamed to httpbin")
            #expect(echoed?["method"] as? String == "PUT")
        }
    }
}
