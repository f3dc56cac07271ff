import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Admission through the service against a real origin: the per-host connection cap as the origin
/// sees it, and a preempted download resumed byte-identical. The admission order itself (caps,
/// priorities, classes, preemption) is tested on a fake engine (`FakeEngineSchedulingTests`).
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
        let ids = try (0..<10).map { try harness.task(in: session, origin.url("/slow/\($0)")).id }
        var tasks: [TransferTask] = []
        for id in ids { tasks.append(try await harness.completion(id)) }
        let sampled = await sampler.stop()

        #expect(tasks.allSatisfy { $0.error == nil && $0.response?.statusCode == 200 })
        for id in ids { #expect(try harness.service.body(task: id, owner: nil).body == body) }
        #expect(origin.requests.count == 10)
        #expect(sampled.samples > 50)
        #expect(sampled.max <= 2, "the origin saw \(sampled.max) connections at once")
        #expect(sampled.max == 2, "two transfers should have run side by side")
        #expect(origin.connectionCount <= 2, "connections are reused, not replaced: \(origin.connectionCount)")
    }

    /// The test: a background download gives its slot to an interactive task, then
    /// continues with a range and ends byte-identical.
    @Test func anInteractiveTaskPreemptsABackgroundDownloadWhichResumesByteIdentical() async throws {
        let file = randomBytes(3 << 20)
        let origin = try OriginServer { request in
            guard request.path == "/big.bin" else { return .text("answer") }
            // Served slowly (about 0.8 MiB/s, some 3.5 s after the preemption point) so the download is still running when preempted.
            guard case .respond(let status, let headers, let body) = OriginBehavior.ranged(file, for: request, headers: ["ETag": "\"v1\""]) else {
                return .respond(status: 500)
            }
            return .slowBody(status: status, headers: headers, body: body, bytesPerWrite: 32 << 10, interval: .milliseconds(40))
        }
        defer { origin.stop() }
        let harness = try ServiceHarness { $0.maxConcurrentTransfers = 1 }
        defer { harness.stop() }
        let background = try harness.session { $0.networkServiceType = .background }
        let interactive = try harness.session { $0.networkServiceType = .responsiveData }

        let download = try harness.service.createTask(in: background, TaskCreate(kind: .download, request: RequestSpec(url: origin.url("/big.bin"))), owner: nil)
        #expect(download.schedulingClass == .background)
        try await harness.waitFor(download.id) { $0.progress.bytesReceived > 256 << 10 }
        let urgent = try harness.task(in: interactive, origin.url("/urgent"))
        let answered = try await harness.completion(urgent.id)
        #expect(answered.error == nil)

        let done = try await harness.completion(download.id)
        #expect(done.error == nil)
        #expect(done.preemptions == 1)
        let location = try #require(done.location)
        #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == file)
        let events = try await harness.events(background).filter { $0.taskId == download.id }.map(\.type)
        #expect(events.contains(.wasPreempted))
        #expect(events.contains(.didResumeAtOffset))
        // The origin saw: the download, the interactive request while it was stopped, then the rest as a range.
        let seen = origin.requests
        #expect(seen.map(\.path) == ["/big.bin", "/urgent", "/big.bin"])
        #expect(seen.last?.header("Range")?.hasPrefix("bytes=") == true && seen.last?.header("Range") != "bytes=0-")
        #expect(seen.last?.header("If-Range") == "\"v1\"")
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
