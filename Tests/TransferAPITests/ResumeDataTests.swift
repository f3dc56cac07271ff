import Foundation
import Synchronization
import Testing
import TestSupport

/// Resume data: cancel(byProducingResumeData:), failures that carry it, and resuming with
/// Range + If-Range against an origin that honours, ignores or cannot serve the range. The final
/// file must always be exactly the resource.
@Suite struct ResumeDataTests {
    static let size = 1024 * 1024
    static let body = Data(count: size) { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
    static let etag = "\"v1\""

    /// First request (no Range): the body, slowly (about 4 s; the tests act after at most
    /// 192 KiB, 0.7 s in, so the action finds it running even when an event reaches a test a
    /// second late on two loaded cores), with an ETag. Ranged requests: `resumed`.
    private static func origin(resumed: @escaping @Sendable (OriginRequest) -> OriginBehavior) throws -> OriginServer {
        try OriginServer { request in
            if request.header("Range") == nil && request.header("X-Again") == nil {
                return .slowBody(headers: ["ETag": etag, "Content-Type": "application/octet-stream"], body: body,
                                 bytesPerWrite: 4096, interval: .milliseconds(15))
            }
            return resumed(request)
        }
    }

    private func startDownload(_ daemon: DaemonFixture, _ url: String) async throws -> Int {
        let task = try await daemon.createTask(["kind": "download", "request": ["url": url]])
        return try #require(task.int("id"))
    }

    /// Waits until `bytes` arrived, cancels with resume data, returns it (nil if none).
    private func cancelForResume(_ daemon: DaemonFixture, _ id: Int, after bytes: Int) async throws -> String? {
        try await daemon.waitForTask(id) { ($0.object("progress")?.int("bytesReceived") ?? 0) >= bytes || $0.string("state") == "completed" }
        let response = try await daemon.post("/v1/tasks/\(id)/cancel", json: ["produceResumeData": true])
        #expect(response.status == 200, "cancel: \(response)")
        let task = try response.object()
        #expect(task.string("state") == "completed")
        #expect(task.object("error")?.int("code") == -999)
        return task.object("error")?.string("resumeData")
    }

    private func resume(_ daemon: DaemonFixture, _ resumeData: String) async throws -> [String: Any] {
        let created = try await daemon.createTask(["kind": "download", "resumeData": resumeData])
        return try await daemon.waitForCompletion(try #require(created.int("id")))
    }

    /// Downloads /file.bin until 64 KiB arrived, cancels with resume data, resumes to completion.
    private func cancelAtQuarterAndResume(_ daemon: DaemonFixture, _ origin: OriginServer) async throws -> (task: [String: Any], id: Int) {
        let id = try await startDownload(daemon, origin.url("/file.bin"))
        let resumeData = try #require(try await cancelForResume(daemon, id, after: 64 * 1024))
        let resumed = try await resume(daemon, resumeData)
        return (resumed, try #require(resumed.int("id")))
    }

    private func file(_ daemon: DaemonFixture, _ id: Int) async throws -> Data {
        let response = try await daemon.get("/v1/tasks/\(id)/file")
        #expect(response.status == 200, "file: \(response)")
        return response.body
    }

    private func resumeOffsets(_ daemon: DaemonFixture, task id: Int) async throws -> [Int] {
        try await daemon.allEvents("shared").filter { $0.int("taskId") == id && $0.string("type") == "didResumeAtOffset" }
            .compactMap { $0.int("fileOffset") }
    }

    private func partialFiles(_ daemon: DaemonFixture) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: daemon.directory.path + "/partial")) ?? []
    }

    /// A download suspended past its timeout has let its connection go; cancelling it with
    /// resume data still hands back its partial file, and resuming completes it.
    @Test func aSuspendedDownloadThatLetItsConnectionGoCancelsWithResumeData() async throws {
        let origin = try Self.origin { .ranged(Self.body, for: $0, headers: ["ETag": Self.etag]) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession(["configuration": ["timeoutIntervalForRequest": 1]]).string("id"))
            let id = try #require(try await daemon.createTask(in: sid, ["kind": "download", "request": ["url": origin.url("/file.bin")]]).int("id"))
            try await daemon.waitForTask(id) { ($0.object("progress")?.int("bytesReceived") ?? 0) >= 64 * 1024 }
            #expect(try await daemon.post("/v1/tasks/\(id)/suspend").status == 200)
            try await Task.sleep(for: .milliseconds(2500))
            let resumeData = try #require(try await cancelForResume(daemon, id, after: 0))
            let resumed = try await resume(daemon, resumeData)
            #expect(resumed.object("error") == nil, "resumed: \(resumed)")
            let resumedId = try #require(resumed.int("id"))
            #expect(try await file(daemon, resumedId) == Self.body)
            #expect((try await resumeOffsets(daemon, task: resumedId).first ?? 0) >= 64 * 1024)
            #expect(partialFiles(daemon).isEmpty)
        }
    }

    @Test func cancelAtTwentyRandomPointsThenResumeIsByteIdentical() async throws {
        let origin = try Self.origin { .ranged(Self.body, for: $0, headers: ["ETag": Self.etag]) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            var offsets: [Int] = []
            for _ in 0..<20 {
                let id = try await startDownload(daemon, origin.url("/file.bin"))
                let cut = Int.random(in: 4096..<(192 * 1024))
                let resumeData = try #require(try await cancelForResume(daemon, id, after: cut))
                let resumed = try await resume(daemon, resumeData)
                let resumedId = try #require(resumed.int("id"))
                #expect(resumed.object("error") == nil, "resumed: \(resumed)")
                #expect(try await file(daemon, resumedId) == Self.body)
                let offset = try #require(try await resumeOffsets(daemon, task: resumedId).first)
                #expect(offset > 0 && offset < Self.size)
                #expect(resumed.object("progress")?.int("bytesReceived") == Self.size)
                offsets.append(offset)
            }
            #expect(Set(offsets).count > 1, "the cuts all fell at one offset: \(offsets)")
            #expect(partialFiles(daemon).isEmpty, "partial files left: \(partialFiles(daemon))")
            // The origin served each resumed task only the missing bytes.
            let ranged = origin.requests.filter { $0.header("Range") != nil }
            #expect(ranged.count == 20)
            #expect(ranged.allSatisfy { $0.header("If-Range") == Self.etag })
        }
    }

    @Test func aServerThatIgnoresRangeRestartsTheFileFromZero() async throws {
        let origin = try Self.origin { .ranged(Self.body, for: $0, headers: ["ETag": Self.etag], support: .ignore) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (_, resumedId) = try await cancelAtQuarterAndResume(daemon, origin)
            #expect(try await file(daemon, resumedId) == Self.body)
            #expect(try await resumeOffsets(daemon, task: resumedId) == [0])
        }
    }

    @Test func aChangedResourceComesBackWholeAndReplacesThePartialFile() async throws {
        let changed = Data(Self.body.reversed().prefix(Self.size - 1000))
        let origin = try Self.origin { .ranged(changed, for: $0, headers: ["ETag": "\"v2\""]) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (_, resumedId) = try await cancelAtQuarterAndResume(daemon, origin)
            #expect(try await file(daemon, resumedId) == changed, "the file mixes the old and the new resource")
            #expect(try await resumeOffsets(daemon, task: resumedId) == [0])
        }
    }

    @Test func anUnsatisfiableRangeStartsOverWithoutRange() async throws {
        // The resource shrank below the offset: 416, then a plain request for the whole of it.
        let plainRequests = Mutex(0)
        let origin = try OriginServer { request in
            if request.header("Range") != nil {
                return .respond(status: 416, headers: ["Content-Range": "bytes */10"], body: Data("not satisfiable".utf8))
            }
            let first = plainRequests.withLock { count in
                count += 1
                return count == 1
            }
            return first
                ? .slowBody(headers: ["ETag": Self.etag], body: Self.body, bytesPerWrite: 4096, interval: .milliseconds(15))
                : .respond(status: 200, headers: ["ETag": "\"v3\""], body: Data("ten bytes!".utf8))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (resumed, resumedId) = try await cancelAtQuarterAndResume(daemon, origin)
            #expect(resumed.object("error") == nil, "resumed: \(resumed)")
            #expect(try await file(daemon, resumedId) == Data("ten bytes!".utf8))
            #expect(origin.requests.map { $0.header("Range") == nil } == [true, false, true], "plain, ranged (416), plain again")
        }
    }

    @Test func aTransportFailureCarriesResumeDataAndA416ForAWholeFileCompletesIt() async throws {
        // The connection drops after the last byte (the server promised more): the partial file
        // is the whole resource, so the ranged request gets 416 with that size.
        let origin = try OriginServer { request in
            if request.header("Range") != nil {
                return .ranged(Self.body, for: request, headers: ["ETag": Self.etag])
            }
            return .wrongLength(declared: Self.size + 100, headers: ["ETag": Self.etag], body: Self.body)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try await startDownload(daemon, origin.url("/file.bin"))
            let failed = try await daemon.waitForCompletion(id)
            #expect(failed.object("error")?.int("code") == -1005)
            let resumeData = try #require(failed.object("error")?.string("resumeData"), "a transport failure must carry resume data")
            let resumed = try await resume(daemon, resumeData)
            let resumedId = try #require(resumed.int("id"))
            #expect(resumed.object("error") == nil, "resumed: \(resumed)")
            #expect(try await file(daemon, resumedId) == Self.body)
            #expect(try await resumeOffsets(daemon, task: resumedId) == [Self.size])
        }
    }

    @Test func withoutAValidatorThereIsNoResumeDataAndNoPartialFileLeft() async throws {
        let origin = try OriginServer { _ in .slowBody(body: Self.body, bytesPerWrite: 4096, interval: .milliseconds(15)) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try await startDownload(daemon, origin.url("/file.bin"))
            #expect(try await cancelForResume(daemon, id, after: 32 * 1024) == nil)
            #expect(partialFiles(daemon).isEmpty)
        }
    }

    @Test func alteredResumeDataIsRefused() async throws {
        let origin = try Self.origin { .ranged(Self.body, for: $0, headers: ["ETag": Self.etag]) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try await startDownload(daemon, origin.url("/file.bin"))
            let resumeData = try #require(try await cancelForResume(daemon, id, after: 32 * 1024))
            var altered = Array(resumeData)
            altered[5] = altered[5] == "A" ? "B" : "A"
            let response = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "download", "resumeData": String(altered)])
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_resume_data")
            #expect(response.error?.string("field") == "resumeData")
        }
    }
}
