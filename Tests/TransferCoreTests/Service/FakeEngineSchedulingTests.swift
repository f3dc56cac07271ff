import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Admission through the service on a fake engine: which task the engine is asked to start, and
/// when. The caps, priorities, service-type classes and preemption decide it; completions (the
/// engine's updates) free the slots.
@Suite struct FakeEngineSchedulingTests {
    @Test func thePerHostCapAdmitsTheNextQueuedTaskWhenOneEnds() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session { $0.httpMaximumConnectionsPerHost = 2 }
        let ids = try (0..<5).map { try harness.task(in: session, "http://one.invalid/\($0)").id }
        let elsewhere = try harness.task(in: session, "http://two.invalid/x").id
        // Two to the host, and the other host has its own two.
        #expect(engine.startedIds == [ids[0], ids[1], elsewhere])
        #expect(try harness.service.task(ids[2], owner: nil).phase == .queued)

        engine.succeed(ids[0])
        #expect(engine.startedIds == [ids[0], ids[1], elsewhere, ids[2]])
        engine.fail(ids[1], .networkConnectionLost)  // a failure frees its slot as well
        #expect(engine.startedIds.suffix(1) == [ids[3]])
        engine.succeed(ids[2])
        engine.succeed(ids[3])
        engine.succeed(ids[4])
        #expect(engine.startedIds == [ids[0], ids[1], elsewhere, ids[2], ids[3], ids[4]])
        for id in [ids[0], ids[2], ids[3], ids[4]] { #expect(try await harness.completion(id).error == nil) }
    }

    @Test func theCapIsPerSessionAndOrigin() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let one = try harness.session { $0.httpMaximumConnectionsPerHost = 1 }
        let two = try harness.session { $0.httpMaximumConnectionsPerHost = 1 }
        let blocker = try harness.task(in: one, "http://origin.invalid/stall")
        let queued = try harness.task(in: one, "http://origin.invalid/q")
        let other = try harness.task(in: two, "http://origin.invalid/other")
        #expect(engine.startedIds == [blocker.id, other.id])
        engine.succeed(other.id)
        #expect(try harness.service.task(queued.id, owner: nil).phase == .queued)
        _ = try harness.service.cancel(task: blocker.id, owner: nil)
        engine.respond(to: blocker.id, with: .completed(.failure(TaskError(.cancelled, "cancelled"))))
        #expect(engine.startedIds.last == queued.id)
    }

    @Test func aSessionCapHoldsItsTasksWhileOtherSessionsRun() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let capped = try harness.session { $0.maximumConcurrentTasks = 1 }
        let other = try harness.session()
        let first = try harness.task(in: capped, "http://a.invalid/1")
        let second = try harness.task(in: capped, "http://b.invalid/2")  // another host: only the session's cap holds it
        let free = try harness.task(in: other, "http://a.invalid/3")
        #expect(engine.startedIds == [first.id, free.id])
        engine.succeed(free.id)
        #expect(try harness.service.task(second.id, owner: nil).phase == .queued)
        engine.succeed(first.id)
        #expect(engine.startedIds == [first.id, free.id, second.id])
    }

    /// Cap 1, 20 queued tasks of mixed priority start in exactly priority, then arrival order;
    /// a PATCH moves a queued task.
    @Test func twentyQueuedTasksStartByPriorityThenArrivalAndAPatchMovesOne() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.maxConcurrentTransfers = 1 }
        defer { harness.stop() }
        let session = try harness.session()
        let blocker = try harness.task(in: session, "http://origin.invalid/blocker").id
        let priorities = [0.25, 0.5, 0.75, 1.0, 0.0, 0.5, 0.25, 0.9, 0.5, 0.75, 0.1, 0.5, 1.0, 0.25, 0.6, 0.5, 0.75, 0.0, 0.3, 0.5]
        var queued: [(priority: Double, id: Int)] = []
        for (index, priority) in priorities.enumerated() {
            let task = try harness.task(in: session, "http://origin.invalid/t\(index)", priority: TaskPriority(value: priority))
            #expect(task.phase == .queued)
            queued.append((priority, task.id))
        }
        // PATCH: the last task (0.5) jumps to the front; an early 1.0 drops to the back.
        _ = try harness.service.update(task: queued[19].id, try JSONCoding.decoder.decode(TaskUpdate.self, from: Data(#"{"priority": "high"}"#.utf8)), owner: nil)
        _ = try harness.service.update(task: queued[3].id, try JSONCoding.decoder.decode(TaskUpdate.self, from: Data(#"{"priority": 0}"#.utf8)), owner: nil)
        queued[19].priority = 0.75
        queued[3].priority = 0.0
        let expected = queued.enumerated().sorted { a, b in
            a.element.priority != b.element.priority ? a.element.priority > b.element.priority : a.offset < b.offset
        }.map(\.element.id)

        // Each completion lets exactly the next one in.
        var running = blocker
        for _ in 0..<queued.count {
            engine.succeed(running)
            running = try #require(engine.startedIds.last)
        }
        engine.succeed(running)
        #expect(engine.startedIds == [blocker] + expected)
    }

    @Test func interactiveBeforeStreamingBeforeDefaultBeforeBackground() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.maxConcurrentTransfers = 1 }
        defer { harness.stop() }
        let session = try harness.session()
        let blocker = try harness.task(in: session, "http://origin.invalid/blocker").id
        var ids: [String: Int] = [:]
        for (path, type, priority) in [("bg", NetworkServiceType.background, 1.0), ("default", .default, 0.5), ("video", .video, 0.1),
                                       ("voice", .voice, 0.2), ("data", .responsiveData, 0.9)] {
            var request = RequestSpec(url: "http://origin.invalid/\(path)")
            request.networkServiceType = type
            let task = try harness.service.createTask(in: session, TaskCreate(kind: .data, request: request, priority: TaskPriority(value: priority)), owner: nil)
            #expect(task.schedulingClass == type.schedulingClass)
            ids[path] = task.id
        }
        var running = blocker
        for _ in 0..<ids.count {
            engine.succeed(running)
            running = try #require(engine.startedIds.last)
        }
        #expect(engine.startedIds == [blocker] + ["data", "voice", "video", "default", "bg"].map { ids[$0]! })
    }

    /// A background download gives its slot to an interactive task: the engine is asked to let
    /// it go, the interactive task starts once it has, and the download goes on afterwards from
    /// its checkpoint.
    @Test func anInteractiveTaskPreemptsABackgroundDownloadWhichGoesOnFromItsCheckpoint() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.maxConcurrentTransfers = 1 }
        defer { harness.stop() }
        let background = try harness.session { $0.networkServiceType = .background }
        let interactive = try harness.session { $0.networkServiceType = .responsiveData }
        let download = try harness.service.createTask(in: background, TaskCreate(kind: .download, request: RequestSpec(url: "http://origin.invalid/big.bin")), owner: nil)
        #expect(download.schedulingClass == .background)
        let head = engine.head(of: download.id, headers: ["Content-Length": "3000000", "ETag": "\"v1\""])
        let checkpoint = ResumeState(offset: 1_000_000, etag: "\"v1\"", expectedLength: 3_000_000)
        engine.respond(to: download.id, with: .response(head), .received(bytes: 1_000_000, total: 1_000_000, expected: 3_000_000, bytesPerSecond: 0), .checkpoint(checkpoint))

        let urgent = try harness.task(in: interactive, "http://origin.invalid/urgent")
        // The download is told to let its connection go, and its slot is the urgent task's at once.
        #expect(engine.commands.filter { $0.taskId != nil }.map(\.summary) == ["start \(download.id)", "preempt", "start \(urgent.id)"])
        #expect(try harness.service.task(download.id, owner: nil).phase == .queued)
        engine.respond(to: download.id, with: .detached(checkpoint))
        #expect(engine.startedIds == [download.id, urgent.id], "a detached download waits for a free slot")

        engine.succeed(urgent.id)
        let again = try await engine.waitForStart(of: download.id, count: 2)
        #expect(again.resume?.offset == 1_000_000 && again.resume?.etag == "\"v1\"")
        engine.respond(to: download.id, with: .response(engine.head(of: download.id, status: 206)), .resumed(offset: 1_000_000, expectedTotal: 3_000_000),
                       .completed(.success(body: Data(), response: head, location: harness.folder.path + "/big.bin")))
        let done = try await harness.completion(download.id)
        #expect(done.error == nil && done.preemptions == 1)
        let events = try await harness.events(background).filter { $0.taskId == download.id }.map(\.type)
        #expect(events.contains(.wasPreempted) && events.contains(.didResumeAtOffset))
    }
}
