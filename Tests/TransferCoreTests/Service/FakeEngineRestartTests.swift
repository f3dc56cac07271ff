import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// What a restart of the service makes of its tasks, on fake engines (one per run): completed
/// and suspended tasks stay, what was in the engine fails as its connection died with it.
@Suite struct FakeEngineRestartTests {
    @Test func restartKeepsCompletedAndSuspendedAndFailsWhatWasRunning() async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-fake-restart")
        defer { folder.remove() }
        let configuration = ServiceConfiguration(dataDirectory: folder.path)
        let engine = FakeEngine()
        let first = try TransferService(configuration: configuration, engine: engine)
        first.start()
        let session = try first.createSession(SessionCreate(), owner: nil).session.id
        func create(_ path: String, state: TaskState = .running) throws -> TransferTask {
            try first.createTask(in: session, TaskCreate(request: RequestSpec(url: "http://origin.invalid/\(path)"), state: state), owner: nil)
        }
        let done = try create("ok")
        let stalled = try create("stall")
        let paused = try create("later", state: .suspended)
        let midway = try create("slow")
        let body = Data("the body".utf8)
        engine.succeed(done.id, body: body)
        _ = try await first.completion(done.id)
        engine.respond(to: stalled.id, with: .response(engine.head(of: stalled.id)))
        engine.respond(to: midway.id, with: .response(engine.head(of: midway.id, headers: ["Content-Length": "100"])),
                       .received(bytes: 10, total: 10, expected: 100, bytesPerSecond: 0))
        _ = try first.suspend(task: midway.id, owner: nil)
        let midwayBefore = try first.task(midway.id, owner: nil)
        first.stop()

        let again = FakeEngine()
        let second = try TransferService(configuration: configuration, engine: again)
        second.start()
        defer { second.stop() }
        let completed = try second.task(done.id, owner: nil)
        #expect(completed.state == .completed && completed.error == nil)
        #expect(try second.body(task: done.id, owner: nil).body == body)
        let lost = try second.task(stalled.id, owner: nil)
        #expect(lost.state == .completed && lost.error?.code == URLErrorCode.networkConnectionLost.rawValue)
        #expect(try second.task(paused.id, owner: nil).state == .suspended)
        // Paused mid-transfer: its connection died with the service, so it waits to start over,
        // and the change of its served state is a new version.
        let restarted = try second.task(midway.id, owner: nil)
        #expect(restarted.state == .suspended && restarted.progress.bytesReceived == 0 && restarted.response == nil)
        #expect(restarted.version > midwayBefore.version)
        #expect(again.startedIds.isEmpty, "nothing runs until it is resumed")
        _ = try second.resume(task: paused.id, owner: nil)
        _ = try second.resume(task: midway.id, owner: nil)
        #expect(again.startedIds == [paused.id, midway.id])
        again.succeed(midway.id, body: body)
        #expect(try await second.completion(midway.id).error == nil)
        let next = try second.createTask(in: session, TaskCreate(request: RequestSpec(url: "http://origin.invalid/new")), owner: nil)
        #expect(next.id > midway.id)
    }
}
