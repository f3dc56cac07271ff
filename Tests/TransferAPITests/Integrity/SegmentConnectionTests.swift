import Foundation
import Synchronization
import Testing
import TestSupport
import TransferAPI
import TransferModel

/// A segmented download's connections beyond its first are the scheduler's to grant (issue 18
/// item 2), with real libcurl against an in-process origin: the origin never sees more
/// connections at once than the session's httpMaximumConnectionsPerHost, though two
/// segmented downloads and queued single downloads compete for them; and the task's
/// `bandwidthLimit` is one limit for all its connections.
@Suite struct SegmentConnectionTests {
    static let single = Data(count: 512 * 1024) { UInt8(truncatingIfNeeded: $0 &* 13) }

    @Test func theOriginNeverSeesMoreConnectionsThanThePerHostCap() async throws {
        // Downloads' plain GETs trickle (so their ranges start while they run); their ranges
        // come at once; the singles trickle too (about 0.15 s each).
        let origin = try OriginServer { request in
            if request.path.hasPrefix("/single") {
                return .slowBody(headers: ["ETag": "\"S\""], body: Self.single, bytesPerWrite: 64 * 1024, interval: .milliseconds(20))
            }
            return request.header("Range") == nil
                ? SegmentedDownloadTests.slowWhole()
                : .ranged(SegmentedDownloadTests.versionA, for: request, headers: ["ETag": "\"A\""])
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let session = try await daemon.createSession(["configuration": ["httpMaximumConnectionsPerHost": 4]])
            let sid = try #require(session.string("id"))
            var downloads: [Int] = []
            for n in 1...2 {
                let created = try await daemon.createTask(in: sid, ["kind": "download", "segments": 4, "request": ["url": origin.url("/big-\(n).bin")]])
                downloads.append(try #require(created.int("id")))
            }
            var singles: [Int] = []
            for n in 1...6 {
                let created = try await daemon.createTask(in: sid, ["kind": "download", "request": ["url": origin.url("/single-\(n)")]])
                singles.append(try #require(created.int("id")))
            }
            for id in downloads {
                let task = try await daemon.waitForCompletion(id, timeout: 90)
                #expect(task.object("error") == nil, "\(task)")
                let file = try await daemon.file(id).body
                #expect(byteDifference(file, SegmentedDownloadTests.versionA) == nil)
            }
            for id in singles {
                let task = try await daemon.waitForCompletion(id, timeout: 60)
                #expect(task.object("error") == nil, "\(task)")
                #expect(try await daemon.file(id).body == Self.single)
            }
            #expect(origin.peakOpenConnections <= 4, "the origin saw \(origin.peakOpenConnections) connections at once")
            // The downloads did use more than one connection each.
            #expect(SegmentedDownloadTests.rangeStarts(origin).count >= 2, "\(SegmentedDownloadTests.rangeStarts(origin))")
        }
    }

    @Test func aSegmentedDownloadStaysWithinItsOwnLimit() async throws {
        let origin = try SegmentedDownloadTests.origin { .ranged(SegmentedDownloadTests.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { origin.stop() }
        let limit = 2 * 1024 * 1024  // 8 MiB in about 4 s
        try await DaemonFixture.with { daemon in
            let started = ContinuousClock.now
            let created = try await daemon.createTask(["kind": "download", "segments": 4, "request": ["url": origin.url("/big.bin")],
                                                       "bandwidthLimit": ["downloadBytesPerSecond": limit]])
            let id = try #require(created.int("id"))
            let task = try await daemon.waitForCompletion(id, timeout: 60)
            let elapsed = ContinuousClock.now - started
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(try await daemon.file(id).body, SegmentedDownloadTests.versionA) == nil)
            #expect(SegmentedDownloadTests.rangeStarts(origin).count >= 2, "it was not segmented: \(SegmentedDownloadTests.rangeStarts(origin))")
            // All four connections together within the one limit (a tenth of a second's burst
            // and a chunk per connection aside; generous: 25 % over).
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rate = Double(SegmentedDownloadTests.size) / seconds
            #expect(rate <= Double(limit) * 1.25, "\(Int(rate)) B/s over \(seconds) s with a limit of \(limit) B/s")
        }
    }

    /// `/big.bin` of `origin` in 4 segments, in a session whose request timeout is 4 s: a
    /// connection idle for half of it (2 s) is ended, the task itself after 4 s. The
    /// completed task and its id.
    private static func downloadInFourSegmentsTimingOutAfterFourSeconds(_ daemon: DaemonFixture, _ origin: OriginServer) async throws -> (task: [String: Any], id: Int) {
        let session = try await daemon.createSession(["configuration": ["timeoutIntervalForRequest": 4]])
        let sid = try #require(session.string("id"))
        let created = try await daemon.createTask(in: sid, ["kind": "download", "segments": 4, "request": ["url": origin.url("/big.bin")]])
        let id = try #require(created.int("id"))
        return (try await daemon.waitForCompletion(id, timeout: 60), id)
    }

    @Test func aStalledSegmentsRangeIsTakenOverByAnotherConnection() async throws {
        // The first ranged request sends its head and 64 KiB, then nothing; the others are
        // answered at once.
        let prefix = 64 * 1024
        let stalledStart = Mutex<Int?>(nil)
        let origin = try OriginServer { request in
            guard request.header("Range") != nil else { return SegmentedDownloadTests.slowWhole() }
            let answer = OriginBehavior.ranged(SegmentedDownloadTests.versionA, for: request, headers: ["ETag": "\"A\""])
            let stall = stalledStart.withLock { start -> Bool in
                guard start == nil, let first = SegmentedDownloadTests.rangeStarts(of: request) else { return false }
                start = first
                return true
            }
            guard stall, case .respond(let status, let headers, let body) = answer else { return answer }
            return .stallAfterHeaders(status: status, headers: headers, contentLength: body.count, bodyPrefix: body.prefix(prefix))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await Self.downloadInFourSegmentsTimingOutAfterFourSeconds(daemon, origin)
            #expect(task.object("error") == nil, "\(task)")
            #expect(task.int("retryCount") ?? 0 == 0, "the task itself timed out: \(task)")
            #expect(byteDifference(try await daemon.file(id).body, SegmentedDownloadTests.versionA) == nil)
            // Another connection took the stalled part over from the byte after what it had sent.
            let stalled = try #require(stalledStart.withLock { $0 })
            let starts = SegmentedDownloadTests.rangeStarts(origin)
            #expect(starts.contains(stalled + prefix), "the stalled range [\(stalled)...] was not taken over: \(starts)")
        }
    }

    /// The first connection's plain GET stalls after 512 KiB (its part, a quarter, is too
    /// small to split): it is ended at half the timeout like any stalled connection, and a
    /// ranged request takes its part over, before the task itself would time out.
    @Test func aStalledFirstConnectionsPartIsTakenOverByAnotherConnection() async throws {
        let prefix = 512 * 1024
        let size = SegmentedDownloadTests.size
        let origin = try OriginServer { request in
            guard request.header("Range") != nil else {
                return .stallAfterHeaders(headers: ["ETag": "\"A\"", "Accept-Ranges": "bytes"], contentLength: size,
                                          bodyPrefix: SegmentedDownloadTests.versionA.prefix(prefix))
            }
            return .ranged(SegmentedDownloadTests.versionA, for: request, headers: ["ETag": "\"A\""])
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let (task, id) = try await Self.downloadInFourSegmentsTimingOutAfterFourSeconds(daemon, origin)
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(try await daemon.file(id).body, SegmentedDownloadTests.versionA) == nil)
            let starts = SegmentedDownloadTests.rangeStarts(origin)
            #expect(starts.contains { $0 >= prefix && $0 < size / 4 }, "the first GET's part was not taken over: \(starts)")
            // Progress counts the file's bytes once, whichever connection brought them.
            #expect(task.value(at: "progress.bytesReceived") as? Int == size, "\(task)")
        }
    }

    @Test func aMirrorTheNetworkPolicyRefusesIsDroppedAndTheDownloadCompletesFromItsSource() async throws {
        let origin = try SegmentedDownloadTests.origin { .ranged(SegmentedDownloadTests.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { origin.stop() }
        // The mirror stands for the daemon's private network (127.0.0.2, denied).
        let inside = try OriginServer(address: "127.0.0.2") { .ranged(SegmentedDownloadTests.versionA, for: $0, headers: ["ETag": "\"A\""]) }
        defer { inside.stop() }
        try await DaemonFixture.with(configure: NetworkPolicyTests.denying("127.0.0.2/32")) { daemon in
            let mirror = inside.url("/copy.bin")
            let created = try await daemon.createTask(["kind": "download", "segments": 4, "request": ["url": origin.url("/big.bin")], "mirrors": [mirror]])
            let id = try #require(created.int("id"))
            let task = try await daemon.waitForCompletion(id, timeout: 60)
            #expect(task.object("error") == nil, "\(task)")
            #expect(byteDifference(try await daemon.file(id).body, SegmentedDownloadTests.versionA) == nil)
            #expect(inside.connectionCount == 0, "the denied mirror was reached")
            #expect(SegmentedDownloadTests.rangeStarts(origin).count >= 2, "the source did not serve the segments")
            // The client is told, once, which source was dropped and why.
            let drops = try await daemon.events("shared").events.filter { $0["type"] as? String == "didDropSource" && $0.int("taskId") == id }
            #expect(drops.count == 1, "\(drops)")
            let error = drops.first?.object("error") ?? [:]
            #expect(drops.first?.string("url") == mirror)
            #expect(error.string("reason") == "network_policy" && error.int("code") == -1004, "\(error)")
            #expect((error.string("message") ?? "").contains("network policy"), "\(error)")
        }
    }
}
