import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

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

    /// The issue's test: cap 1, 20 queued tasks of mixed priority start in exactly priority,
    /// then arrival order; a PATCH moves a queued task.
    @Test func twentyQueuedTasksStartByPriorityThenArrivalAndAPatchMovesOne() async throws {
        let slot = try await BlockedSlot()
        defer { slot.stop() }
        let (origin, harness, session) = (slot.origin, slot.harness, slot.session)
        let priorities = [0.25, 0.5, 0.75, 1.0, 0.0, 0.5, 0.25, 0.9, 0.5, 0.75, 0.1, 0.5, 1.0, 0.25, 0.6, 0.5, 0.75, 0.0, 0.3, 0.5]
        var queued: [(path: String, priority: Double, id: Int)] = []
        for (index, priority) in priorities.enumerated() {
            let path = "/t\(index)"
            let task = try harness.task(in: session, origin.url(path), priority: TaskPriority(value: priority))
            queued.append((path, priority, task.id))
        }
        for item in queued { #expect(try harness.service.task(item.id, owner: nil).phase == .queued) }
        // PATCH: the last task (0.5) jumps to the front; an early 1.0 drops to the back.
        _ = try harness.service.update(task: queued[19].id, try JSONCoding.decoder.decode(TaskUpdate.self, from: Data(#"{"priority": "high"}"#.utf8)), owner: nil)
        _ = try harness.service.update(task: queued[3].id, try JSONCoding.decoder.decode(TaskUpdate.self, from: Data(#"{"priority": 0}"#.utf8)), owner: nil)
        queued[19].priority = 0.75
        queued[3].priority = 0.0
        let expected = queued.enumerated().sorted { a, b in
            a.element.priority != b.element.priority ? a.element.priority > b.element.priority : a.offset < b.offset
        }.map(\.element.path)

        try slot.release()
        for item in queued { #expect(try await harness.completion(item.id).error == nil) }
        #expect(origin.requests.map(\.path) == ["/blocker"] + expected)
    }

    @Test func interactiveBeforeStreamingBeforeDefaultBeforeBackground() async throws {
        let slot = try await BlockedSlot()
        defer { slot.stop() }
        let (origin, harness, session) = (slot.origin, slot.harness, slot.session)
        var ids: [Int] = []
        for (path, type, priority) in [("/bg", NetworkServiceType.background, 1.0), ("/default", .default, 0.5), ("/video", .video, 0.1),
                                       ("/voice", .voice, 0.2), ("/data", .responsiveData, 0.9)] {
            var request = RequestSpec(url: origin.url(path))
            request.networkServiceType = type
            let task = try harness.service.createTask(in: session, TaskCreate(kind: .data, request: request, priority: TaskPriority(value: priority)), owner: nil)
            #expect(task.schedulingClass == type.schedulingClass)
            ids.append(task.id)
        }
        try slot.release()
        for id in ids { #expect(try await harness.completion(id).error == nil) }
        #expect(origin.requests.map(\.path) == ["/blocker", "/data", "/voice", "/video", "/default", "/bg"])
    }

    @Test func aSessionCapHoldsItsTasksWhileOtherSessionsRun() async throws {
        let origin = try OriginServer { request in
            request.path.hasPrefix("/stall") ? .stallAfterHeaders(contentLength: 10) : .text("quick")
        }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let capped = try harness.session { $0.maximumConcurrentTasks = 1 }
        let other = try harness.session()
        let first = try harness.task(in: capped, origin.url("/stall1"))
        try await harness.waitFor(first.id) { $0.phase == .transferring }
        let second = try harness.task(in: capped, origin.url("/q"))
        #expect(try await harness.completion(try harness.task(in: other, origin.url("/other")).id).error == nil)
        #expect(try harness.service.task(second.id, owner: nil).phase == .queued)
        _ = try harness.service.cancel(task: first.id, owner: nil)
        #expect(try await harness.completion(second.id).error == nil)
    }

    /// The issue's test: a background download gives its slot to an interactive task, then
    /// continues with a range and ends byte-identical.
    @Test func anInteractiveTaskPreemptsABackgroundDownloadWhichResumesByteIdentical() async throws {
        let file = randomBytes(3 << 20)
        let origin = try OriginServer { request in
            guard request.path == "/big.bin" else { return .text("answer") }
            // Served slowly (about 2.5 MiB/s) so the download is still running when preempted.
            guard case .respond(let status, let headers, let body) = OriginBehavior.ranged(file, for: request, headers: ["ETag": "\"v1\""]) else {
                return .respond(status: 500)
            }
            return .slowBody(status: status, headers: headers, body: body, bytesPerWrite: 32 << 10, interval: .milliseconds(12))
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

/// A service whose one transfer slot (cap 1) is taken by a stalled transfer to `/blocker`, so
/// every task created next waits in the queue until `release`. Other paths answer their path.
private struct BlockedSlot {
    let origin: OriginServer
    let harness: ServiceHarness
    let session: String
    let blocker: Int

    init() async throws {
        origin = try OriginServer { request in
            request.path == "/blocker" ? .stallAfterHeaders(contentLength: 10) : .text(request.path)
        }
        harness = try ServiceHarness { $0.maxConcurrentTransfers = 1 }
        session = try harness.session()
        blocker = try harness.task(in: session, origin.url("/blocker")).id
        try await harness.waitFor(blocker) { $0.phase == .transferring }
    }

    /// Cancels the blocker: the queue drains in admission order.
    func release() throws { _ = try harness.service.cancel(task: blocker, owner: nil) }

    func stop() {
        harness.stop()
        origin.stop()
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
