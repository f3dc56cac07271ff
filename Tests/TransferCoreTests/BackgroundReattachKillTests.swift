import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 5's proof for background sessions: the real executable killed with SIGKILL while a
/// background session's two downloads and a tus upload run against slowed servers, restarted on
/// the same data folder; the tasks carry on while no client is attached and end byte-identical;
/// the client reattaches (200, the same session) and the feed replays, from its acknowledged
/// cursor, exactly the events it had not acknowledged (every one it saw before the kill, field
/// for field, then what ran meanwhile), ending with didFinishEvents.
@Suite struct BackgroundReattachKillTests {
    static let downloadSize = 3 << 20
    static let uploadBody = Data(count: 2 << 20) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
    private static let json = ["Content-Type": "application/json"]

    private func send(_ client: TestHTTPClient, _ method: String, _ path: String, _ json: String? = nil, body: Data? = nil, status: Int) async throws -> TestHTTPResponse {
        let headers = json != nil ? Self.json : ["Content-Type": "application/octet-stream"]
        let response = try await client.sendAsync(method, path, headers: headers, body: json.map { Data($0.utf8) } ?? body, timeout: 60)
        try #require(response.status == status, "\(method) \(path): \(response)")
        return response
    }

    /// Every event after `after` the feed serves now (wait 0), following `next`.
    private func drain(_ client: TestHTTPClient, _ session: String, after: Int, attachment: String? = nil) async throws -> [[String: Any]] {
        var all: [[String: Any]] = []
        var cursor = after
        while true {
            var path = "/v1/sessions/\(session)/events?after=\(cursor)&wait=0&limit=1000"
            if let attachment { path += "&attachment=\(attachment)" }
            let page = try await send(client, "GET", path, status: 200).jsonObject()
            let events = try #require(page["events"] as? [[String: Any]])
            if events.isEmpty { return all }
            all += events
            cursor = try #require(page["next"] as? Int)
        }
    }

    @Test func aBackgroundSessionSurvivesKillNineAndTheFeedReplaysWhatWasNotAcknowledged() async throws {
        let resource = GeneratedBytes(count: Self.downloadSize, seed: 5)
        let origin = try StreamingOrigin(resource: resource, etag: "\"reattach-v1\"", bytesPerSecond: 1 << 20)
        defer { origin.stop() }
        // The first PATCH is read at 384 KiB/s (over 5 s for the body); later ones at once.
        let tus = try TusServer { request in
            request.method == "PATCH" && request.header("Upload-Offset") == "0" ? .throttle(bytesPerSecond: 384 * 1024) : .none
        }
        defer { tus.stop() }
        let folder = try TempDirectory(prefix: "transferd-reattach-kill")
        defer { folder.remove() }

        // First life: a background session, attached; two downloads and a tus upload running.
        let first = try await DaemonProcess.start(dataDirectory: folder.path)
        var client = TestHTTPClient(port: first.port)
        let blob = try await send(client, "POST", "/v1/blobs", body: Self.uploadBody, status: 201).jsonObject()
        let blobId = try #require(blob["id"] as? String)
        let created = try await send(client, "POST", "/v1/sessions", #"{"kind": "background", "identifier": "reattach-kill"}"#, status: 201)
        let session = try #require(try created.jsonObject()["id"] as? String)
        let firstAttachment = try #require(created.header("Transferd-Attachment"))
        var ids: [Int] = []
        for name in ["a", "b"] {
            let task = try await send(client, "POST", "/v1/sessions/\(session)/tasks", #"{"kind": "download", "request": {"url": "\#(origin.url("/\(name).bin"))"}}"#, status: 201)
            ids.append(try #require(try task.jsonObject()["id"] as? Int))
        }
        let upload = try await send(client, "POST", "/v1/sessions/\(session)/tasks", #"""
            {"kind": "upload", "resumable": "tus", "request": {"url": "\#(tus.creationURL)", "method": "POST", "body": {"blob": "\#(blobId)"}}}
            """#, status: 201)
        let uploadId = try #require(try upload.jsonObject()["id"] as? Int)

        // Read the feed with the attachment for a while; acknowledge the first few events.
        try await Task.sleep(for: .milliseconds(600))
        let early = try await drain(client, session, after: 0, attachment: firstAttachment)
        try #require(early.count >= 4, "too few events to acknowledge some: \(early)")
        let acknowledged = try #require(early[2]["seq"] as? Int)
        _ = try await send(client, "POST", "/v1/sessions/\(session)/events/ack", #"{"through": \#(acknowledged)}"#, status: 200)
        try await Task.sleep(for: .milliseconds(1400))
        // What the client saw and did not acknowledge, up to the moment of the kill.
        let seen = try await drain(client, session, after: acknowledged, attachment: firstAttachment)
        for id in ids + [uploadId] {
            let task = try await send(client, "GET", "/v1/tasks/\(id)", status: 200).jsonObject()
            try #require(task["state"] as? String == "running", "task \(id) is not mid-transfer at the kill: \(task)")
        }
        first.kill(SIGKILL)
        try #require(await first.waitForExit(timeout: 10) == SIGKILL)
        origin.setRate(nil)

        // Second life: no client attached while the tasks finish by themselves.
        let second = try await DaemonProcess.start(dataDirectory: folder.path)
        defer { second.terminate() }
        client = TestHTTPClient(port: second.port)
        for id in ids + [uploadId] {
            let done = try await pollTask(client, id, timeout: 60) { ($0["state"] as? String) == "completed" }
            #expect(done["error"] is NSNull, "task \(id): \(done)")
        }
        for id in ids {
            let task = try await send(client, "GET", "/v1/tasks/\(id)", status: 200).jsonObject()
            let location = try #require(task["location"] as? String, "\(task)")
            #expect(try sha256(ofFile: location) == resource.sha256(), "download \(id) is not the resource")
        }
        let received = tus.uploads.first?.data ?? Data()
        let firstDifference = zip(received, Self.uploadBody).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(tus.uploads.count == 1 && received == Self.uploadBody,
                "the upload is not the body: \(tus.uploads.count) uploads, \(received.count) of \(Self.uploadBody.count) bytes, first difference at \(firstDifference.map(String.init) ?? "none")")

        // The old attachment died with the process; the client reattaches: 200, the same session.
        let stale = try await client.sendAsync("GET", "/v1/sessions/\(session)/events?attachment=\(firstAttachment)")
        #expect(stale.status == 409, "\(stale)")
        let reattached = try await send(client, "POST", "/v1/sessions", #"{"kind": "background", "identifier": "reattach-kill"}"#, status: 200)
        #expect(try reattached.jsonObject()["id"] as? String == session)
        let attachment = try #require(reattached.header("Transferd-Attachment"))
        let replay = try await drain(client, session, after: acknowledged, attachment: attachment)

        // A second client is turned away while this one is attached.
        let rival = try await client.sendAsync("POST", "/v1/sessions", headers: Self.json, body: Data(#"{"kind": "background", "identifier": "reattach-kill"}"#.utf8))
        #expect(rival.status == 409)
        #expect((try rival.jsonObject()["error"] as? [String: Any])?["code"] as? String == "background_session_in_use")

        // Exactly the unacknowledged events: everything seen before the kill, unchanged and in
        // order, then what ran meanwhile, then didFinishEvents, once, last.
        let seqs = replay.compactMap { $0["seq"] as? Int }
        #expect(seqs.count == replay.count && zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "\(seqs)")
        #expect(seqs.allSatisfy { $0 > acknowledged })
        #expect(replay.count > seen.count)
        let prefix = Array(replay.prefix(seen.count))
        #expect(zip(prefix, seen).allSatisfy { NSDictionary(dictionary: $0).isEqual(to: $1) }, "an event seen before the kill changed or was lost")
        let finishes = replay.filter { $0["type"] as? String == "didFinishEvents" }
        #expect(finishes.count == 1)
        let finish = try #require(replay.last)
        #expect(finish["type"] as? String == "didFinishEvents")
        #expect(finish["backlog"] as? Int == replay.count - 1)
        #expect(finish["acknowledgedThrough"] as? Int == acknowledged)
        // Each task's story ends with its metrics and completion before didFinishEvents: the downloads
        // resumed from a checkpoint, the upload from the server's offset.
        for id in ids + [uploadId] {
            let types = replay.filter { $0["taskId"] as? Int == id }.compactMap { $0["type"] as? String }
            #expect(Array(types.suffix(2)) == ["didFinishCollectingMetrics", "didCompleteWithError"], "task \(id): \(types)")
        }
        for id in ids {
            let types = replay.filter { $0["taskId"] as? Int == id }.compactMap { $0["type"] as? String }
            #expect(types.contains("didFinishDownloadingTo") && types.contains("didResumeAtOffset"), "download \(id): \(types)")
        }
        let uploadTypes = replay.filter { $0["taskId"] as? Int == uploadId }.compactMap { $0["type"] as? String }
        #expect(uploadTypes.contains("didResumeUpload"), "upload: \(uploadTypes)")
        print("BackgroundReattachKillTests: acknowledged through \(acknowledged); \(seen.count) events seen before the kill; replay of \(replay.count) (\(replay.count - seen.count - 1) from after the restart) ending with didFinishEvents; origin responses \(origin.responses)")
    }
}
