import Foundation
import Synchronization
import Testing
import TestSupport
import LibCrypto

/// Segmented downloads (issue 18 item 2), with real libcurl against in-process origins: the
/// parts reassemble byte for byte; a wrong ranged answer (another version, another range, a
/// 200) never puts a byte in the file; a slow connection's part is split and taken over; a
/// mirror with other bytes is dropped. The first connection's plain GET trickles (so it is
/// still running when the ranges start, and is the straggler); ranges are answered at once.
@Suite struct SegmentedDownloadTests {
    static let size = 8 * 1024 * 1024
    static let versionA = Data(count: size) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) }
    static let versionB = Data(count: size) { UInt8(truncatingIfNeeded: $0 &* 31 &+ 3) }
    static let checksumA = "sha-256=" + HashFunction.sha256.hash(versionA).map { String(format: "%02x", $0) }.joined()

    /// The plain GET: version A with ETag "A" and `Accept-Ranges: bytes`, 64 KiB every 20 ms.
    static func slowWhole(_ body: Data = versionA, etag: String = "\"A\"") -> OriginBehavior {
        .slowBody(headers: ["ETag": etag, "Accept-Ranges": "bytes"], body: body, bytesPerWrite: 64 * 1024, interval: .milliseconds(20))
    }

    /// An origin whose plain GET trickles version A and whose ranged GETs get `ranged`.
    static func origin(ranged: @escaping @Sendable (OriginRequest) -> OriginBehavior) throws -> OriginServer {
        try OriginServer { request in
            request.header("Range") == nil ? slowWhole() : ranged(request)
        }
    }

    /// The first byte each ranged request asked for.
    static func rangeStarts(_ origin: OriginServer) -> [Int] {
        origin.requests.compactMap(rangeStarts(of:))
    }

    /// The first byte a ranged request asked for (nil: not ranged).
    static func rangeStarts(of request: OriginRequest) -> Int? {
        request.header("Range").flatMap { Int($0.dropFirst("bytes=".count).prefix { $0 != "-" }) }
    }

    private func download(_ daemon: DaemonFixture, _ url: String, _ extra: [String: Any]) async throws -> (task: [String: Any], file: Data) {
        let created = try await daemon.createTask(["kind": "download", "request": ["url": url]].merging(extra) { _, new in new })
        let id = try #require(created.int("id"))
        let task = try await daemon.waitForCompletion(id, timeout: 60)
        let file = try await daemon.file(id).body
        return (task, file)
    }

    @Test func segmentsReassembleByteIdentical() async throws {
        let origin = try Self.origin { .ranged(Self.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4, "checksum": Self.checksumA])
            #expect(task.object("error") == nil, "\(task)")
            #expect(task.int("segments") == 4)
            #expect(byteDifference(file, Self.versionA) == nil, "the file is not version A (\(file.count) bytes)")
            #expect(Self.rangeStarts(origin).count >= 3, "ranges asked: \(Self.rangeStarts(origin))")
            #expect(task.value(at: "progress.bytesReceived") as? Int == Self.size)
            #expect(FileSystemProbe.tree(daemon.dataPath + "/partial").isEmpty)
        }
    }

    @Test func theSessionDefaultSegmentsADownload() async throws {
        let origin = try Self.origin { .ranged(Self.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let session = try await daemon.createSession(["configuration": ["maximumSegmentsPerDownload": 3]])
            let sid = try #require(session.string("id"))
            #expect(session.value(at: "configuration.maximumSegmentsPerDownload") as? Int == 3)
            let created = try await daemon.createTask(in: sid, ["kind": "download", "request": ["url": origin.url("/file.bin")]])
            let id = try #require(created.int("id"))
            #expect(created.isNull("segments"))
            let task = try await daemon.waitForCompletion(id, timeout: 60)
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(try await daemon.file(id).body, Self.versionA) == nil)
            #expect(Self.rangeStarts(origin).count >= 2)
        }
    }

    @Test func aServerWithoutAcceptRangesIsFetchedOverOneConnection() async throws {
        let origin = try OriginServer { _ in .respond(headers: ["ETag": "\"A\""], body: Self.versionA) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil)
            #expect(origin.requests.count == 1 && Self.rangeStarts(origin).isEmpty, "\(origin.requests)")
        }
    }

    @Test func aServerThatIgnoresRangesFallsBackToOneConnection() async throws {
        // It announces ranges but answers each ranged GET with the whole body (200).
        let origin = try Self.origin { _ in .respond(headers: ["ETag": "\"A\"", "Accept-Ranges": "bytes"], body: Self.versionA) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4, "checksum": Self.checksumA])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil, "the file is not version A (\(file.count) bytes)")
        }
    }

    /// A continuation over one connection (`Range` with `If-Range: "A"`) gets version A's
    /// bytes honestly; the segments' ranges (no If-Range) get `wrong`.
    static func originWithWrongSegments(_ wrong: @escaping @Sendable (OriginRequest) -> OriginBehavior) throws -> OriginServer {
        try origin { request in
            request.header("If-Range") != nil ? .ranged(Self.versionA, for: request, headers: ["ETag": "\"A\""]) : wrong(request)
        }
    }

    @Test func aRangeOfAnotherVersionIsNeverWritten() async throws {
        // Every segment's answer is the right range of version B, labelled "B".
        let origin = try Self.originWithWrongSegments({ .ranged(Self.versionB, for: $0, headers: ["ETag": "\"B\""]) })
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil, "bytes of version B were mixed in")
        }
    }

    @Test func aWrongContentRangeIsNeverWritten() async throws {
        // A 206 of version A's bytes, but from 1 KiB later than asked (its Content-Range says so).
        let origin = try Self.originWithWrongSegments({ request in
            guard case .respond(_, var headers, _) = OriginBehavior.ranged(Self.versionA, for: request, headers: ["ETag": "\"A\""]),
                  let range = headers["Content-Range"], let start = Int(range.dropFirst("bytes ".count).prefix { $0 != "-" }) else { return .respond(status: 500) }
            let shifted = start + 1024
            headers["Content-Range"] = "bytes \(shifted)-\(Self.size - 1)/\(Self.size)"
            return .respond(status: 206, headers: headers, body: Self.versionA.subdata(in: shifted..<Self.size))
        })
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4, "checksum": Self.checksumA])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil, "a shifted range was written")
        }
    }

    /// Every ranged answer is cut off after 256 KiB: the source is dropped, and the first GET
    /// reads on over the parts the others had begun. The file is version A, and its progress
    /// counts each byte once (it once reported more bytes than the file has).
    @Test func rangesCutShortFallBackToTheFirstConnectionAndCountEachByteOnce() async throws {
        let origin = try Self.origin { request in
            let answer = OriginBehavior.ranged(Self.versionA, for: request, headers: ["ETag": "\"A\""])
            guard case .respond(let status, let headers, let body) = answer else { return answer }
            return .resetMidBody(afterBytes: 256 * 1024, status: status, headers: headers, body: body)
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil)
            #expect(!Self.rangeStarts(origin).isEmpty, "no range was asked for")
            #expect(task.value(at: "progress.bytesReceived") as? Int == Self.size, "\(task)")
        }
    }

    @Test func aStragglersPartIsSplitAndTakenOver() async throws {
        let origin = try Self.origin { .ranged(Self.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 2])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil)
            // Two parts: the trickling GET holds [0, 4 MiB), a range [4 MiB, 8 MiB) comes at
            // once. Then the free connection takes the second half of the first part: a range
            // that starts inside it.
            let starts = Self.rangeStarts(origin)
            #expect(starts.contains(Self.size / 2), "\(starts)")
            #expect(starts.contains { $0 > 0 && $0 < Self.size / 2 }, "the slow part was not split: \(starts)")
        }
    }

    @Test func aMirrorWithOtherBytesIsDropped() async throws {
        let origin = try Self.origin { .ranged(Self.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { origin.stop() }
        let mirror = try OriginServer { .ranged(Self.versionB, for: $0, headers: ["ETag": "\"B\""]) }
        defer { mirror.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4, "mirrors": [mirror.url("/copy.bin")], "checksum": Self.checksumA])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil, "the mirror's bytes were mixed in")
            #expect(!mirror.requests.isEmpty, "the mirror was never tried")
            #expect((task["mirrors"] as? [String]) == [mirror.url("/copy.bin")])
        }
    }

    @Test func aMirrorOfAnotherLengthIsDropped() async throws {
        let origin = try Self.origin { .ranged(Self.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { origin.stop() }
        let shorter = Self.versionA.prefix(Self.size - 4096)
        let mirror = try OriginServer { .ranged(Data(shorter), for: $0, headers: ["ETag": "\"A\""]) }
        defer { mirror.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4, "mirrors": [mirror.url("/copy.bin")]])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil)
            #expect(!mirror.requests.isEmpty, "the mirror was never tried")
        }
    }

    @Test func aGoodMirrorServesSegments() async throws {
        let origin = try Self.origin { .ranged(Self.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { origin.stop() }
        let mirror = try OriginServer { .ranged(Self.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { mirror.stop() }
        try await DaemonFixture.with { daemon in
            let (task, file) = try await download(daemon, origin.url("/file.bin"), ["segments": 4, "mirrors": [mirror.url("/copy.bin")], "checksum": Self.checksumA])
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(file, Self.versionA) == nil)
            #expect(Self.rangeStarts(mirror).count >= 1, "the mirror served no range")
        }
    }

    @Test func badSegmentsAndMirrorsAreRefused() async throws {
        try await DaemonFixture.with { daemon in
            let request: [String: Any] = ["url": "http://127.0.0.1:9/file"]
            let cases: [(body: [String: Any], status: Int, field: String)] = [
                (["kind": "download", "request": request, "segments": 0], 422, "segments"),
                (["kind": "download", "request": request, "segments": 17], 422, "segments"),
                (["kind": "download", "request": request, "segments": 2.5], 422, "segments"),
                (["kind": "download", "request": request, "segments": "4"], 400, "segments"),
                (["kind": "data", "request": request, "segments": 4], 422, "segments"),
                (["kind": "download", "request": request, "mirrors": "http://127.0.0.1:9/x"], 400, "mirrors"),
                (["kind": "download", "request": request, "mirrors": ["not a url"]], 422, "mirrors[0]"),
                (["kind": "download", "request": request, "mirrors": ["http://127.0.0.1:9/a", "ftp://127.0.0.1/x"]], 422, "mirrors[1]"),
                (["kind": "download", "request": request, "mirrors": (0..<9).map { "http://127.0.0.1:9/\($0)" }], 422, "mirrors"),
                (["kind": "download", "request": request, "mirrors": ["http://127.0.0.1:9/a", "http://127.0.0.1:9/a"]], 422, "mirrors"),
                // Served back in the task and its events: a password there would be shown to all.
                (["kind": "download", "request": request, "mirrors": ["http://bob:secret@127.0.0.1:9/a"]], 422, "mirrors[0]"),
                (["kind": "upload", "request": request.merging(["body": ["text": "x"]]) { a, _ in a }, "mirrors": ["http://127.0.0.1:9/a"]], 422, "mirrors"),
            ]
            for (body, status, field) in cases {
                let response = try await daemon.post("/v1/sessions/shared/tasks", json: body)
                #expect(response.status == status, "\(body): \(response)")
                let error = try? response.object().object("error")
                #expect(error?.string("field") == field, "\(body): \(response)")
                #expect((error?.string("message") ?? "").isEmpty == false)
            }
            let session = try await daemon.post("/v1/sessions", json: ["configuration": ["maximumSegmentsPerDownload": 0]])
            #expect(session.status == 422, "\(session)")
            // Nothing was stored.
            let listed = try await daemon.get("/v1/tasks").object()
            #expect((listed["tasks"] as? [Any])?.isEmpty == true, "\(listed)")
        }
    }
}
