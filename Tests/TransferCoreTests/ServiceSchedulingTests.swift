import Foundation
import TestSupport
import Testing
@testable import TransferCore

/// Admission through the service: the per-host connection cap as the origin sees it, and priority.
@Suite struct ServiceSchedulingTests {
    @Test func perHostCapLimitsOpenConnectionsAtTheOrigin() async throws {
        let body = randomBytes(16 * 1_024)
        let origin = try OriginServer { _ in .slowBody(body: body, bytesPerWrite: 2_048, interval: .milliseconds(50)) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session { $0.httpMaximumConnectionsPerHost = 2 }

        // Sample the origin's open connections for as long as the tasks run, on a thread of its
        // own (Swift concurrency's two threads may be busy with other tests).
        let sampler = ConnectionSampler(origin)
        let ids = try (0..<6).map { try harness.task(in: session, origin.url("/slow/\($0)")).id }
        var tasks: [TransferTask] = []
        for id in ids { tasks.append(try await harness.completion(id)) }
        let sampled = await sampler.stop()

        #expect(tasks.allSatisfy { $0.error == nil && $0.response?.statusCode == 200 })
        for id in ids { #expect(try harness.service.body(task: id, owner: nil).body == body) }
        #expect(origin.requests.count == 6)
        #expect(sampled.samples > 50)
        #expect(sampled.max <= 2, "the origin saw \(sampled.max) connections at once")
        #expect(sampled.max == 2, "two transfers should have run side by side")
        #expect(origin.connectionCount <= 2, "connections are reused, not replaced: \(origin.connectionCount)")
    }

    @Test func theCapIsPerSessionAndOrigin() async throws {
        let origin = try OriginServer { request in
            request.path == "/stall" ? .stallAfterHeaders(contentLength: 10) : .text("quick")
        }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let one = try harness.session { $0.httpMaximumConnectionsPerHost = 1 }
        let two = try harness.session { $0.httpMaximumConnectionsPerHost = 1 }
        let blocker = try harness.task(in: one, origin.url("/stall"))
        let queued = try harness.task(in: one, origin.url("/q"))
        let other = try harness.task(in: two, origin.url("/other"))
        try await harness.waitFor(blocker.id) { $0.phase == .transferring }
        // Another session to the same origin has its own slot.
        let otherDone = try await harness.completion(other.id)
        #expect(otherDone.error == nil)
        #expect(try harness.service.task(queued.id, owner: nil).phase == .queued)
        _ = try harness.service.cancel(task: blocker.id, owner: nil)
        let queuedDone = try await harness.completion(queued.id)
        #expect(queuedDone.error == nil)
    }

    @Test func higherPriorityRunsFirstAndReprioritisingReorders() async throws {
        let origin = try OriginServer { request in
            request.path == "/blocker" ? .stallAfterHeaders(contentLength: 10) : .text(request.path)
        }
        defer { origin.stop() }
        let harness = try ServiceHarness { $0.maxConcurrentTransfers = 1 }
        defer { harness.stop() }
        let session = try harness.session()

        let blocker = try harness.task(in: session, origin.url("/blocker"))
        try await harness.waitFor(blocker.id) { $0.phase == .transferring }
        let low1 = try harness.task(in: session, origin.url("/low1"), priority: .low)
        let low2 = try harness.task(in: session, origin.url("/low2"), priority: .low)
        let low3 = try harness.task(in: session, origin.url("/low3"), priority: .low)
        let high = try harness.task(in: session, origin.url("/high"), priority: .high)
        let mid = try harness.task(in: session, origin.url("/mid"), priority: .default)
        for id in [low1.id, low2.id, low3.id, high.id, mid.id] {
            #expect(try harness.service.task(id, owner: nil).phase == .queued)
        }
        // PATCH priority re-orders a queued task at once.
        let raised = try harness.service.update(task: low3.id, try JSONCoding.decoder.decode(TaskUpdate.self, from: Data(#"{"priority": 1.0}"#.utf8)), owner: nil)
        #expect(raised.priority.value == 1.0)

        _ = try harness.service.cancel(task: blocker.id, owner: nil)
        var finished: [TransferTask] = []
        for id in [low1.id, low2.id, low3.id, high.id, mid.id] { finished.append(try await harness.completion(id)) }
        #expect(finished.allSatisfy { $0.error == nil })
        #expect(origin.requests.map(\.path) == ["/blocker", "/low3", "/high", "/mid", "/low1", "/low2"])
        let starts = finished.map { ($0.originalRequest.url, $0.startedAt ?? .distantPast) }.sorted { $0.1 < $1.1 }.map(\.0)
        #expect(starts == ["/low3", "/high", "/mid", "/low1", "/low2"].map { origin.url($0) })
    }
}

/// Samples `OriginServer.openConnections` about every millisecond on a dedicated thread.
final class ConnectionSampler: @unchecked Sendable {
    // @unchecked Sendable: every var is touched only with `condition` locked.
    private let condition = NSCondition()
    private var running = true
    private var ended = false
    private var highest = 0
    private var samples = 0

    init(_ origin: OriginServer) {
        let thread = Thread { [self] in
            while true {
                let open = origin.openConnections
                condition.lock()
                highest = max(highest, open)
                samples += 1
                let stop = !running
                if stop { ended = true; condition.broadcast() }
                condition.unlock()
                if stop { return }
                usleep(1_000)
            }
        }
        thread.name = "ConnectionSampler"
        thread.start()
    }

    /// Stops sampling; returns the most connections seen open at once and how many samples.
    func stop() async -> (max: Int, samples: Int) {
        await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                condition.lock()
                running = false
                while !ended { condition.wait() }
                let result = (highest, samples)
                condition.unlock()
                continuation.resume(returning: result)
            }
            thread.start()
        }
    }
}
