import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService
internal import JSONModel

/// A task's life through the service on a fake engine: what the service asks of the engine, and
/// what it makes of each update (state, phase, progress, events), with no sockets.
@Suite struct FakeEngineLifecycleTests {
    @Test func aQueuedTaskStartsWhenTheSlotFreesAndReportsItsLifeInOrder() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.maxConcurrentTransfers = 1 }
        defer { harness.stop() }
        let session = try harness.session()
        let first = try harness.task(in: session, "http://origin.invalid/first")
        let created = try harness.task(in: session, "http://origin.invalid/data?x=1")
        #expect(created.state == .running && created.phase == .queued)
        #expect(engine.startedIds == [first.id])

        engine.succeed(first.id, body: Data("first".utf8))
        let job = try #require(engine.started.last)
        #expect(job.taskId == created.id)
        #expect(job.request.url == "http://origin.invalid/data?x=1" && job.request.method == "GET")
        #expect(try harness.service.task(created.id, owner: nil).phase == .connecting)

        let body = Data("0123456789".utf8)
        let head = engine.head(of: created.id, headers: ["Content-Length": "10", "Content-Type": "text/plain"])
        engine.respond(to: created.id, with: .response(head))
        var task = try harness.service.task(created.id, owner: nil)
        #expect(task.phase == .transferring && task.response?.statusCode == 200)
        #expect(task.progress.bytesExpectedToReceive == 10)

        engine.respond(to: created.id, with: .received(bytes: 4, total: 4, expected: 10, bytesPerSecond: 100))
        task = try harness.service.task(created.id, owner: nil)
        #expect(task.progress.bytesReceived == 4 && task.state == .running)

        engine.respond(to: created.id, with: .received(bytes: 6, total: 10, expected: 10, bytesPerSecond: 100),
                       .completed(.success(body: body, response: head, location: nil)))
        task = try await harness.completion(created.id)
        #expect(task.error == nil && task.phase == .done && task.progress.bytesReceived == 10)
        #expect(try harness.service.body(task: created.id, owner: nil).body == body)

        let events = try await harness.events(session).filter { $0.taskId == created.id }
        #expect(events.map(\.type) == [.didReceiveResponse, .didReceiveData, .didReceiveData, .willCacheResponse,
                                       .didFinishCollectingMetrics, .didCompleteWithError], "\(events.map(\.type))")
        #expect(events.filter { $0.type == .didReceiveData }.map { $0.fields["totalBytesReceived"] } == [.integer(4), .integer(10)])
        #expect(events.last?.fields["error"] == .null)
        #expect(events.map(\.seq) == events.map(\.seq).sorted())
    }

    @Test func suspendAndResumeOfARunningTaskPauseAndResumeItsTransfer() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), "http://origin.invalid/slow")
        engine.respond(to: created.id, with: .response(engine.head(of: created.id)))

        let suspended = try harness.service.suspend(task: created.id, owner: nil)
        #expect(suspended.state == .suspended)
        #expect(engine.controls(of: created.id).map(\.summary) == ["pause"])
        let resumed = try harness.service.resume(task: created.id, owner: nil)
        #expect(resumed.state == .running && resumed.phase == .transferring)
        #expect(engine.controls(of: created.id).map(\.summary) == ["pause", "resume"])
        // The same transfer goes on: it is not started again.
        #expect(engine.startedIds == [created.id])
        engine.respond(to: created.id, with: .completed(.success(body: Data("ok".utf8), response: engine.head(of: created.id), location: nil)))
        #expect(try await harness.completion(created.id).error == nil)
    }

    @Test func aTaskCreatedSuspendedStartsOnlyWhenResumed() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), "http://origin.invalid/x", state: .suspended)
        #expect(engine.startedIds.isEmpty)
        _ = try harness.service.resume(task: created.id, owner: nil)
        #expect(engine.startedIds == [created.id])
        #expect(try harness.service.task(created.id, owner: nil).phase == .connecting)
    }

    @Test func cancelOfARunningTaskWaitsForTheEngineThenFreesTheSlot() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine) { $0.maxConcurrentTransfers = 1 }
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, "http://origin.invalid/stall")
        let next = try harness.task(in: session, "http://origin.invalid/next")
        engine.respond(to: created.id, with: .response(engine.head(of: created.id)))

        let cancelling = try harness.service.cancel(task: created.id, owner: nil)
        #expect(cancelling.state == .canceling)
        #expect(engine.controls(of: created.id).map(\.summary) == ["cancel(keepPartial: false)"])
        // Until the engine has let the transfer go, its slot stays taken.
        #expect(engine.startedIds == [created.id])

        engine.respond(to: created.id, with: .completed(.failure(TaskError(.cancelled, "cancelled"))))
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.cancelled.rawValue && task.phase == .done)
        #expect(engine.startedIds == [created.id, next.id])
        let types = try await harness.events(session).filter { $0.taskId == created.id }.map(\.type)
        #expect(types == [.didReceiveResponse, .didFinishCollectingMetrics, .didCompleteWithError])
        let again = #expect(throws: ServiceError.self) { try harness.service.cancel(task: created.id, owner: nil) }
        if case .conflict(let code, _)? = again { #expect(code == "task_completed") } else { Issue.record("expected a conflict, got \(String(describing: again))") }
    }

    @Test func cancelByProducingResumeDataKeepsThePartialDownload() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.service.createTask(in: session, TaskCreate(kind: .download, request: RequestSpec(url: "http://origin.invalid/big.bin")), owner: nil)
        let head = engine.head(of: created.id, headers: ["Content-Length": "10000", "ETag": "\"v1\""])
        let checkpoint = ResumeState(offset: 4_000, etag: "\"v1\"", expectedLength: 10_000)
        engine.respond(to: created.id, with: .response(head), .received(bytes: 4_000, total: 4_000, expected: 10_000, bytesPerSecond: 0), .checkpoint(checkpoint))

        _ = try harness.service.cancel(task: created.id, produceResumeData: true, owner: nil)
        #expect(engine.controls(of: created.id).map(\.summary) == ["cancel(keepPartial: true)"])
        engine.respond(to: created.id, with: .completed(.interrupted(TaskError(.cancelled, "cancelled"), checkpoint)))
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.cancelled.rawValue)
        #expect(task.error?.resumeData != nil, "a cancel by producing resume data must carry it")
        #expect(task.progress.bytesReceived == 4_000)
    }

    @Test func aCancelWithoutResumeDataSendsNone() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let created = try harness.service.createTask(in: try harness.session(), TaskCreate(kind: .download, request: RequestSpec(url: "http://origin.invalid/big.bin")), owner: nil)
        _ = try harness.service.cancel(task: created.id, owner: nil)
        #expect(engine.controls(of: created.id).map(\.summary) == ["cancel(keepPartial: false)"])
        engine.respond(to: created.id, with: .completed(.failure(TaskError(.cancelled, "cancelled"))))
        #expect(try await harness.completion(created.id).error?.resumeData == nil)
    }

    @Test func aNetworkFailureCompletesTheTaskWithItsErrorAndNoBody() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, "http://origin.invalid/reset")
        engine.respond(to: created.id, with: .response(engine.head(of: created.id)))
        engine.fail(created.id, .networkConnectionLost)
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.networkConnectionLost.rawValue)
        #expect(task.retryCount == 0)  // a default session reports it at once
        #expect(throws: ServiceError.self) { try harness.service.body(task: created.id, owner: nil) }
        let completions = try await harness.events(session).filter { $0.type == .didCompleteWithError }
        #expect(completions.count == 1)
        if case .object(let error)? = completions.first?.fields["error"] {
            #expect(error["code"] == .integer(Int64(URLErrorCode.networkConnectionLost.rawValue)))
        } else {
            Issue.record("didCompleteWithError without its error: \(String(describing: completions.first))")
        }
    }

    @Test func aRedirectMovesTheCurrentRequestAndIsReported() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, "http://origin.invalid/start")
        engine.respond(to: created.id, with: .redirect(statusCode: 301, from: "http://origin.invalid/start", to: "http://origin.invalid/end", method: "GET"))
        let task = try harness.service.task(created.id, owner: nil)
        #expect(task.currentRequest?.url == "http://origin.invalid/end")
        #expect(task.originalRequest.url == "http://origin.invalid/start")
        let redirect = try #require(try await harness.events(session).first { $0.type == .willPerformHTTPRedirection })
        #expect(redirect.fields["statusCode"] == .integer(301) && redirect.fields["newURL"] == .string("http://origin.invalid/end"))
    }
}
