import Foundation
import Synchronization
import Testing
import TestSupport

/// Every ranged answer to a resumed download is validated before a byte of it is written: the
/// version ("A", 512 KiB kept) must be the one If-Range named, the range must start at the offset
/// asked for and the total must be the known length. Otherwise the partial file is discarded and
/// the download starts over with a plain GET: the file is one version, never a splice.
@Suite struct RangedResumeTests {
    static let size = 4 * 1024 * 1024
    static let versionA = Data(count: size) { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 10) }
    static let versionB = Data(count: size) { UInt8(truncatingIfNeeded: $0 &* 29 &+ 5) }

    /// A plain GET streams version A slowly (about 5 s, cancelled at an eighth with 4.5 s to
    /// spare, so a late event still finds it running) or, once `served`
    /// says the resource changed, version B at once; a ranged GET gets `ranged`.
    private static func origin(
        afterChange: Data = versionB, etagAfterChange: String = "\"B\"",
        ranged: @escaping @Sendable (OriginRequest, Int) -> OriginBehavior
    ) throws -> OriginServer {
        let plainRequests = Mutex(0)
        return try OriginServer { request in
            if let range = request.header("Range"), let offset = Int(range.dropFirst("bytes=".count).dropLast()) {
                return ranged(request, offset)
            }
            let first = plainRequests.withLock { count in
                count += 1
                return count == 1
            }
            return first
                ? .slowBody(headers: ["ETag": "\"A\""], body: versionA, bytesPerWrite: 16 * 1024, interval: .milliseconds(20))
                : .respond(headers: ["ETag": etagAfterChange], body: afterChange)
        }
    }

    /// Downloads until 512 KiB arrived, cancels with resume data, resumes; the resumed task.
    private func cancelPartWayAndResume(_ daemon: DaemonFixture, _ origin: OriginServer) async throws -> (task: [String: Any], id: Int) {
        let id = try #require(try await daemon.createTask(["kind": "download", "request": ["url": origin.url("/file.bin")]]).int("id"))
        try await daemon.waitForTask(id) { ($0.object("progress")?.int("bytesReceived") ?? 0) >= 512 * 1024 }
        let cancelled = try await daemon.post("/v1/tasks/\(id)/cancel", json: ["produceResumeData": true]).object()
        let resumeData = try #require(cancelled.object("error")?.string("resumeData"))
        let created = try await daemon.createTask(["kind": "download", "resumeData": resumeData])
        let resumedId = try #require(created.int("id"))
        return (try await daemon.waitForCompletion(resumedId), resumedId)
    }

    /// The rest of a version of the file: a 206 with the given fields.
    private static func partial(_ version: Data, from offset: Int, etag: String?, contentRange: String? = nil) -> OriginBehavior {
        var headers = ["Content-Range": contentRange ?? "bytes \(offset)-\(version.count - 1)/\(version.count)"]
        if let etag { headers["ETag"] = etag }
        return .respond(status: 206, headers: headers, body: version.subdata(in: offset..<version.count))
    }

    private func expectStartedOver(_ daemon: DaemonFixture, _ origin: OriginServer, task: [String: Any], id: Int, expected: Data) async throws {
        #expect(task.object("error") == nil, "\(task)")
        let file = try await daemon.file(id).body
        #expect(byteDifference(file, expected) == nil, "the file is not one whole version")
        #expect(origin.requests.map { $0.header("Range") == nil } == [true, false, true], "plain, ranged (refused), plain again")
        #expect(origin.requests.last?.header("If-Range") == nil)
        #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
    }

    @Test func a206OfAnotherVersionIsNotSplicedIn() async throws {
        // The origin ignores If-Range and answers with the rest of version B, labelled "B".
        let origin = try Self.origin { _, offset in Self.partial(Self.versionB, from: offset, etag: "\"B\"") }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await cancelPartWayAndResume(daemon, origin)
            #expect(origin.requests[1].header("If-Range") == "\"A\"")
            try await expectStartedOver(daemon, origin, task: task, id: id, expected: Self.versionB)
        }
    }

    @Test func a206WithoutAValidatorIsNotTrusted() async throws {
        let origin = try Self.origin { _, offset in Self.partial(Self.versionA, from: offset, etag: nil) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await cancelPartWayAndResume(daemon, origin)
            try await expectStartedOver(daemon, origin, task: task, id: id, expected: Self.versionB)
        }
    }

    @Test(arguments: [-100, 100])
    func a206ThatStartsElsewhereIsNotUsed(shift: Int) async throws {
        let origin = try Self.origin { _, offset in
            let start = offset + shift
            return .respond(status: 206, headers: ["ETag": "\"A\"", "Content-Range": "bytes \(start)-\(Self.size - 1)/\(Self.size)"],
                            body: Self.versionA.subdata(in: start..<Self.size))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await cancelPartWayAndResume(daemon, origin)
            try await expectStartedOver(daemon, origin, task: task, id: id, expected: Self.versionB)
        }
    }

    @Test func a206WithAnotherTotalIsNotUsed() async throws {
        let origin = try Self.origin { _, offset in
            Self.partial(Self.versionA, from: offset, etag: "\"A\"", contentRange: "bytes \(offset)-\(Self.size - 1)/\(Self.size + 1)")
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await cancelPartWayAndResume(daemon, origin)
            try await expectStartedOver(daemon, origin, task: task, id: id, expected: Self.versionB)
        }
    }

    /// A 206 whose Content-Length is not its range's length would leave the file short (fewer
    /// bytes) or add bytes that are not the resource's (more): refused before a byte is written.
    @Test(arguments: [-1000, 1000])
    func a206WhoseContentLengthIsNotItsRangeIsNotUsed(delta: Int) async throws {
        let origin = try Self.origin { _, offset in
            let rest = Self.versionA.subdata(in: offset..<Self.size)
            let body = delta < 0 ? rest.prefix(rest.count + delta) : rest + Data(repeating: 0x5A, count: delta)
            return .respond(status: 206, headers: ["ETag": "\"A\"", "Content-Range": "bytes \(offset)-\(Self.size - 1)/\(Self.size)"], body: Data(body))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await cancelPartWayAndResume(daemon, origin)
            try await expectStartedOver(daemon, origin, task: task, id: id, expected: Self.versionB)
        }
    }

    /// A 206 without a length whose body ends (the server closes) before its range does: the
    /// task is not a completed file of the wrong length. It fails as a dropped connection
    /// does, keeping what arrived for a resume, which then finishes the same version.
    @Test func a206ThatEndsBeforeItsRangeLeavesAResumableDownloadNotAShortFile() async throws {
        let cut = Mutex(true)
        let origin = try Self.origin { _, offset in
            let rest = Self.versionA.subdata(in: offset..<Self.size)
            let headers = ["ETag": "\"A\"", "Content-Range": "bytes \(offset)-\(Self.size - 1)/\(Self.size)"]
            let first = cut.withLock { first in
                defer { first = false }
                return first
            }
            return first ? .closeDelimited(status: 206, headers: headers, body: rest.prefix(rest.count / 2)) : .respond(status: 206, headers: headers, body: rest)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, _) = try await cancelPartWayAndResume(daemon, origin)
            let error = try #require(task.object("error"), "a short file was reported complete: \(task)")
            #expect(error.int("code") == -1005, "\(error)")
            #expect(error.string("message")?.contains("ended the body after") == true, "\(error)")
            #expect(FileSystemProbe.tree(daemon.dataPath + "/files").isEmpty, "no file was placed")
            let resumeData = try #require(error.string("resumeData"), "what arrived is kept for a resume")
            let resumed = try #require(try await daemon.createTask(["kind": "download", "resumeData": resumeData]).int("id"))
            let finished = try await daemon.waitForCompletion(resumed)
            #expect(finished.object("error") == nil, "\(finished)")
            #expect(byteDifference(try await daemon.file(resumed).body, Self.versionA) == nil)
            #expect(origin.requests.count == 3, "one plain request and two ranged ones")
        }
    }

    @Test func theRestOfTheSameVersionContinuesTheFile() async throws {
        let origin = try Self.origin { _, offset in Self.partial(Self.versionA, from: offset, etag: "\"A\"") }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await cancelPartWayAndResume(daemon, origin)
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(try await daemon.file(id).body, Self.versionA) == nil)
            #expect(origin.requests.count == 2, "one plain and one ranged request")
        }
    }

    @Test func a200ForAChangedResourceReplacesThePartialFile() async throws {
        // If-Range did its job: the origin sends the whole of version B with 200.
        let origin = try Self.origin { _, _ in .respond(headers: ["ETag": "\"B\""], body: Self.versionB) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await cancelPartWayAndResume(daemon, origin)
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(try await daemon.file(id).body, Self.versionB) == nil)
        }
    }
}
