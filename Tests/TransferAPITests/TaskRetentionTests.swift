import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Completed tasks are deleted by `DELETE /v1/tasks/{tid}` or when their retention time has
/// passed: record, response body and the files they left in the data folder go, a file moved to
/// a destination stays, and a deleted task's id is never given again.
@Suite struct TaskRetentionTests {
    static let payload = Data(count: 50_000) { UInt8(truncatingIfNeeded: $0 &* 13) }

    private static func origin() throws -> OriginServer {
        try OriginServer { request in .ranged(payload, for: request, headers: ["ETag": "\"r1\""]) }
    }

    @Test func deletingACompletedDownloadRemovesItsRecordAndFileButNotADestination() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let kept = try #require(try await daemon.downloadTask(["url": origin.url("/a.bin")], destination: "mine.bin").int("id"))
            let served = try #require(try await daemon.downloadTask(["url": origin.url("/b.bin")]).int("id"))
            for id in [kept, served] { #expect(try await daemon.waitForCompletion(id).isNull("error")) }
            let location = try #require(try await daemon.task(served).string("location"))
            #expect(FileManager.default.fileExists(atPath: location))

            for id in [kept, served] {
                let deleted = try await daemon.request("DELETE", "/v1/tasks/\(id)")
                #expect(deleted.status == 204, "\(deleted)")
                #expect(try await daemon.get("/v1/tasks/\(id)").status == 404)
                #expect(try await daemon.request("DELETE", "/v1/tasks/\(id)").errorCode == "not_found")
            }
            #expect(!FileManager.default.fileExists(atPath: location))
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").isEmpty)
            #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.downloadsRoot + "/mine.bin")) == Self.payload)
            let listed = try await daemon.get("/v1/sessions/shared/tasks").object()
            #expect((listed["items"] as? [Any])?.isEmpty == true, "\(listed)")
        }
    }

    @Test func deleteFileRemovesTheDestinationsFileAndAWrongValueChangesNothing() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url("/a.bin")], destination: "gone/mine.bin").int("id"))
            #expect(try await daemon.waitForCompletion(id).isNull("error"))
            let path = daemon.downloadsRoot + "/gone/mine.bin"
            #expect(FileManager.default.fileExists(atPath: path))

            let refused = try await daemon.request("DELETE", "/v1/tasks/\(id)?deleteFile=yes")
            #expect(refused.status == 400 && refused.errorCode == "invalid_query", "\(refused)")
            #expect(try await daemon.get("/v1/tasks/\(id)").status == 200)
            #expect(FileManager.default.fileExists(atPath: path))

            #expect(try await daemon.request("DELETE", "/v1/tasks/\(id)?deleteFile=true").status == 204)
            #expect(try await daemon.get("/v1/tasks/\(id)").status == 404)
            #expect(!FileManager.default.fileExists(atPath: path))
            // Its folder, which may hold other files of the client's, stays.
            #expect(FileManager.default.fileExists(atPath: daemon.downloadsRoot + "/gone"))
        }
    }

    @Test func aSessionsEventsReadForOneTaskHoldOnlyThatTasksEvents() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let first = try #require(try await daemon.downloadTask(["url": origin.url("/a.bin")]).int("id"))
            let second = try #require(try await daemon.downloadTask(["url": origin.url("/b.bin")]).int("id"))
            for id in [first, second] { #expect(try await daemon.waitForCompletion(id).isNull("error")) }
            let page = try await daemon.get("/v1/sessions/shared/events?after=0&task=\(second)").object()
            let events = try #require(page["events"] as? [[String: Any]])
            #expect(!events.isEmpty)
            #expect(events.allSatisfy { ($0["taskId"] as? Int) == second }, "\(events)")
            #expect(events.contains { ($0["type"] as? String) == "didCompleteWithError" })
            let both = try await daemon.get("/v1/sessions/shared/events?after=0&task=\(second)&types=didCompleteWithError").object()
            #expect((both["events"] as? [[String: Any]])?.count == 1, "\(both)")
            #expect(try await daemon.get("/v1/sessions/shared/events?task=0").errorCode == "invalid_query")
        }
    }

    @Test func aRunningTaskIsNotDeletedAndADeletedIdIsNotGivenAgainAfterARestart() async throws {
        try await DaemonFixture.with { daemon in
            let suspended = try #require(try await daemon.dataTask(["url": "http://127.0.0.1:9/"], extra: ["state": "suspended"]).int("id"))
            let refused = try await daemon.request("DELETE", "/v1/tasks/\(suspended)")
            #expect(refused.status == 409)
            #expect(refused.errorCode == "task_not_completed")
            #expect(try await daemon.task(suspended).string("state") == "suspended")

            #expect(try await daemon.post("/v1/tasks/\(suspended)/cancel").status == 200)
            #expect(try await daemon.request("DELETE", "/v1/tasks/\(suspended)").status == 204)
            // A partial file no task owns (a crash between two steps) is removed at start.
            try FileManager.default.createDirectory(atPath: daemon.dataPath + "/partial", withIntermediateDirectories: true)
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: daemon.dataPath + "/partial/424242.part"))
            daemon.stop()
            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await second.get("/v1/tasks/\(suspended)").status == 404)
            let next = try #require(try await second.dataTask(["url": "http://127.0.0.1:9/"], extra: ["state": "suspended"]).int("id"))
            #expect(next > suspended, "id \(suspended) was given again")
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
        }
    }

    @Test func aPartialFileKeptForResumeDataGoesWithItsTask() async throws {
        let origin = try OriginServer { _ in
            .slowBody(headers: ["ETag": "\"r1\""], body: Self.payload, bytesPerWrite: 1000, interval: .milliseconds(80))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.downloadTask(["url": origin.url("/slow.bin")]).int("id"))
            try await daemon.waitForTask(id) { ($0.object("progress")?.int("bytesReceived") ?? 0) > 0 }
            let cancelled = try await daemon.post("/v1/tasks/\(id)/cancel", json: ["produceResumeData": true]).object()
            #expect(cancelled.object("error")?.string("resumeData") != nil, "\(cancelled)")
            #expect(!FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
            #expect(try await daemon.request("DELETE", "/v1/tasks/\(id)").status == 204)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
        }
    }

    @Test func completedTasksExpireAfterTheRetentionTimeAndRunningOnesDoNot() async throws {
        let origin = try Self.origin()
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.taskRetention = 1 }) { daemon in
            let done = try #require(try await daemon.downloadTask(["url": origin.url("/c.bin")]).int("id"))
            #expect(try await daemon.waitForCompletion(done).isNull("error"))
            let location = try #require(try await daemon.task(done).string("location"))
            let waiting = try #require(try await daemon.dataTask(["url": "http://127.0.0.1:9/"], extra: ["state": "suspended"]).int("id"))
            // Retention 1 s, swept every 0.25 s: gone well within 2.5 s.
            let start = ContinuousClock.now
            while try await daemon.get("/v1/tasks/\(done)").status == 200 {
                #expect(seconds(since: start) < 2.5, "task \(done) outlived its retention")
                if seconds(since: start) >= 2.5 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(seconds(since: start) > 0.3, "task \(done) expired before its retention")
            #expect(!FileManager.default.fileExists(atPath: location))
            #expect(try await daemon.task(waiting).string("state") == "suspended")
        }
    }
}
