import Foundation
import Synchronization
import Testing
@testable import TransferModel
@testable import TransferEngine

/// A transfer engine with no sockets, for the service's tests (`TransferRunner`): it records
/// every command the service submits, and reports the updates a test chooses through the
/// service's observer, on the test's thread, as the engine thread would (holding none of the
/// service's locks). Like the real engine it reports only for transfers it runs: started by a
/// `.start` command and not yet ended by a completion or a detach; an update for any other task
/// is a test's mistake and is recorded as an issue.
///
/// Nothing happens by itself: a cancel, pause or preempt is only recorded, and the test answers
/// it as libcurl would (`.completed(.failure(cancelled))`, `.detached(...)`), so each test says
/// exactly what the engine did.
final class FakeEngine: TransferRunner {
    private struct State {
        var observer: (any TransferObserver)?
        var running = false
        var commands: [EngineCommand] = []
        /// Transfers started and not ended, by task id.
        var transfers: [Int: TransferJob] = [:]
        var waiters: [Waiter] = []
        var nextWaiter = 0
    }

    /// A test waiting for a condition on the commands.
    private struct Waiter {
        let id: Int
        let condition: @Sendable ([EngineCommand]) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let state = Mutex(State())

    // MARK: TransferRunner

    func start(observer: any TransferObserver) {
        state.withLock { s in
            s.observer = observer
            s.running = true
        }
    }

    var isRunning: Bool { state.withLock { $0.running } }

    func submit(_ command: EngineCommand) {
        let woken = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.commands.append(command)
            if case .start(let job) = command { s.transfers[job.taskId] = job }
            let commands = s.commands
            let met = s.waiters.filter { $0.condition(commands) }
            s.waiters.removeAll { waiter in met.contains { $0.id == waiter.id } }
            return met.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    @discardableResult
    func stop(timeout: Double) -> Bool {
        state.withLock { s in
            s.running = false
            s.transfers.removeAll()
        }
        return true
    }

    // MARK: what the service asked

    /// Every command so far, in the order the service submitted them.
    var commands: [EngineCommand] { state.withLock { $0.commands } }

    /// The jobs the service started, in order (a task retried or resumed from scratch appears again).
    var started: [TransferJob] {
        commands.compactMap { command -> TransferJob? in
            guard case .start(let job) = command else { return nil }
            return job
        }
    }

    /// The task ids the service started, in order.
    var startedIds: [Int] { started.map(\.taskId) }

    /// Whether the engine runs a transfer of task `id` now (started, not ended).
    func isRunning(_ id: Int) -> Bool { state.withLock { $0.transfers[id] != nil } }

    /// The commands naming task `id`, but its starts (pause, resume, cancel, preempt, ...).
    func controls(of id: Int) -> [EngineCommand] {
        commands.filter { $0.taskId == id && !$0.isStart }
    }

    /// Waits until `condition` holds for the commands so far, checked now and on each new one
    /// (a hold timer or a store commit may submit them from another thread); throws after `timeout`.
    func waitUntil(_ what: String, timeout: Double = 10, _ condition: @escaping @Sendable ([EngineCommand]) -> Bool) async throws {
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let met = state.withLock { s in
                if condition(s.commands) { return true }
                s.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                return false
            }
            if met { return continuation.resume() }
            Task {
                try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                let expired = state.withLock { s -> Waiter? in
                    guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return s.waiters.remove(at: index)
                }
                expired?.continuation.resume(throwing: EngineWaitTimedOut(what: what, commands: self.commands))
            }
        }
    }

    /// Waits until task `id` has been started `count` times in all; returns that start's job.
    @discardableResult
    func waitForStart(of id: Int, count: Int = 1, timeout: Double = 10) async throws -> TransferJob {
        try await waitUntil("start \(count) of task \(id)", timeout: timeout) { commands in
            commands.filter { $0.startedTaskId == id }.count >= count
        }
        return started.filter { $0.taskId == id }[count - 1]
    }

    // MARK: what the engine reports

    /// Reports `updates` for task `id`, in order, through the service's observer. A completion or
    /// a detach ends the transfer (the engine no longer has it), as on the engine thread.
    func respond(to id: Int, with updates: TransferUpdate..., sourceLocation: SourceLocation = #_sourceLocation) {
        for update in updates {
            let observer = state.withLock { s -> (any TransferObserver)? in
                guard s.transfers[id] != nil else { return nil }
                if update.endsTransfer { s.transfers[id] = nil }
                return s.observer
            }
            guard let observer else {
                Issue.record("the engine runs no transfer of task \(id): it cannot report \(update)", sourceLocation: sourceLocation)
                return
            }
            observer.transfer(id, update)
        }
    }

    /// The response head the engine reports for task `id`'s running job (its URL).
    func head(of id: Int, status: Int = 200, headers: [String: String] = [:]) -> ResponseInfo {
        let url = state.withLock { $0.transfers[id]?.request.url } ?? "http://fake.invalid/"
        return ResponseInfo(statusCode: status, headers: headers, url: url)
    }

    /// A data task's whole successful life: its response, its body in one report, its end.
    func succeed(_ id: Int, status: Int = 200, headers: [String: String] = [:], body: Data = Data(), sourceLocation: SourceLocation = #_sourceLocation) {
        var headers = headers
        headers["Content-Length"] = headers["Content-Length"] ?? "\(body.count)"
        let response = head(of: id, status: status, headers: headers)
        respond(to: id, with: .response(response), sourceLocation: sourceLocation)
        if !body.isEmpty {
            respond(to: id, with: .received(bytes: body.count, total: body.count, expected: body.count, bytesPerSecond: 0), sourceLocation: sourceLocation)
        }
        respond(to: id, with: .completed(.success(body: body, response: response, location: nil)), sourceLocation: sourceLocation)
    }

    /// Ends task `id`'s transfer with `code`, as libcurl's failures are mapped.
    func fail(_ id: Int, _ code: URLErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
        respond(to: id, with: .completed(.failure(TaskError(code, "fake \(code.name)"))), sourceLocation: sourceLocation)
    }
}

/// A wait on the fake engine's commands that did not end in time.
struct EngineWaitTimedOut: Error, CustomStringConvertible {
    let what: String
    let commands: [EngineCommand]
    var description: String { "timed out waiting for \(what); commands: \(commands)" }
}

extension EngineCommand {
    /// The task a command is about (nil for daemon-wide and pool commands).
    var taskId: Int? {
        switch self {
        case .start(let job): job.taskId
        case .pause(let id), .resume(let id), .cancel(let id, _), .preempt(let id), .bodyAvailable(let id, _, _),
             .setPriority(let id, _), .setBandwidthLimit(let id, _), .grantConnection(let id, _), .decide(let id, _): id
        case .openStream(let job): job.taskId
        case .stream(let command): command.taskId
        case .setLimits, .renewConnections, .forgetConnections: nil
        }
    }

    var startedTaskId: Int? { if case .start(let job) = self { job.taskId } else { nil } }
    var isStart: Bool { startedTaskId != nil }
}

extension TransferUpdate {
    /// After this update the engine no longer has the transfer.
    var endsTransfer: Bool {
        switch self {
        case .completed, .detached, .stream(.finished): true
        default: false
        }
    }
}

extension EngineCommand {
    /// A short name to compare in tests ("pause", "cancel(keepPartial: true)", ...).
    var summary: String {
        switch self {
        case .start(let job): "start \(job.taskId)"
        case .pause: "pause"
        case .resume: "resume"
        case .cancel(_, let keepPartial): "cancel(keepPartial: \(keepPartial))"
        case .preempt: "preempt"
        case .bodyAvailable: "bodyAvailable"
        case .setPriority(_, let priority): "setPriority(\(priority))"
        case .setBandwidthLimit: "setBandwidthLimit"
        case .setLimits: "setLimits"
        case .renewConnections: "renewConnections"
        case .forgetConnections: "forgetConnections"
        case .openStream: "openStream"
        case .stream: "stream"
        case .grantConnection(_, let origin): "grantConnection(\(origin))"
        case .decide(_, let answer): "decide(\(answer.name))"
        }
    }
}
