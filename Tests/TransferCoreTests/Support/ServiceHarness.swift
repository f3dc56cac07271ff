import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// A `TransferService` on its own temporary data folder, started, with helpers that wait through
/// the service's long-poll API (never by sleeping and looking again).
final class ServiceHarness: Sendable {
    let folder: TempDirectory
    let service: TransferService

    /// `engine`: nil runs transfers on libcurl; a `FakeEngine` runs none (the test answers).
    init(engine: (any TransferRunner)? = nil, _ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        folder = try TempDirectory(prefix: "transferd-coretests")
        var configuration = ServiceConfiguration(dataDirectory: folder.path)
        configure(&configuration)
        service = try TransferService(configuration: configuration, engine: engine)
        service.start()
    }

    /// Stops the service and deletes its folder.
    func stop() {
        service.stop()
        folder.remove()
    }

    /// A new default session, configured by `configure`.
    func session(_ configure: (inout SessionConfiguration) -> Void = { _ in }) throws -> String {
        var configuration = SessionConfiguration()
        configure(&configuration)
        return try service.createSession(SessionCreate(configuration: configuration), owner: nil).session.id
    }

    /// Creates a data task for `url` in `session`.
    func task(
        in session: String, _ url: String, timeoutInterval: Double? = nil, priority: TaskPriority = .default,
        state: TaskState = .running, method: String = "GET", body: RequestBody? = nil
    ) throws -> TransferTask {
        var request = RequestSpec(url: url, method: method, body: body)
        request.timeoutInterval = timeoutInterval
        return try service.createTask(in: session, TaskCreate(kind: .data, request: request, priority: priority, state: state), owner: nil)
    }

    func progress(_ id: Int, after: Int, wait: Double) async throws -> ProgressSnapshot {
        try await service.longPoll(id, after: after, wait: wait)
    }

    @discardableResult
    func waitFor(_ id: Int, timeout: Double = 20, _ what: String = "condition", _ condition: (ProgressSnapshot) -> Bool) async throws -> ProgressSnapshot {
        try await service.waitFor(id, timeout: timeout, what, condition)
    }

    func completion(_ id: Int, timeout: Double = 20) async throws -> TransferTask {
        try await service.completion(id, timeout: timeout)
    }

    func events(_ session: String) async throws -> [TaskEvent] {
        try await service.allEvents(session)
    }
}

/// Waiting through the service's long-poll API.
extension TransferService {
    /// One long-poll: answered at once when the task's version is past `after`, else after a
    /// change or `wait` seconds.
    func longPoll(_ id: Int, after: Int, wait: Double) async throws -> ProgressSnapshot {
        let service = self
        return try await withCheckedThrowingContinuation { continuation in
            do {
                try service.progress(task: id, after: after, wait: wait, owner: nil) { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Long-polls until `condition` holds for the task's progress; throws `TimedOut` after `timeout`.
    @discardableResult
    func waitFor(
        _ id: Int, timeout: Double = 20, _ what: String = "condition", _ condition: (ProgressSnapshot) -> Bool
    ) async throws -> ProgressSnapshot {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var version = 0
        while true {
            let remaining = deadline - ContinuousClock.now
            let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
            let snapshot = try await longPoll(id, after: version, wait: max(0, min(5, seconds)))
            if condition(snapshot) { return snapshot }
            if seconds <= 0 { throw TimedOut(what: "task \(id): \(what)", last: snapshot) }
            version = snapshot.version
        }
    }

    /// Waits for the task to complete and returns its final record.
    func completion(_ id: Int, timeout: Double = 20) async throws -> TransferTask {
        try await waitFor(id, timeout: timeout, "completion") { $0.state == .completed }
        return try task(id, owner: nil)
    }

    /// Every event of `session` so far (wait 0: no holding).
    func allEvents(_ session: String) async throws -> [TaskEvent] {
        let service = self
        var all: [TaskEvent] = []
        var after = 0
        while true {
            let page: EventPage = try await withCheckedThrowingContinuation { continuation in
                do {
                    try service.events(session: session, after: after, limit: 1_000, wait: 0, owner: nil) { continuation.resume(returning: $0) }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            all += page.events
            if page.events.isEmpty { return all }
            after = page.next
        }
    }
}

/// A wait that did not end in time.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    let last: ProgressSnapshot?
    var description: String { "timed out waiting for \(what); last: \(String(describing: last))" }
}

/// Random bytes of `count`, so a wrong offset or a lost chunk cannot go unnoticed.
func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        for index in raw.indices { raw[index] = UInt8.random(in: 0...255, using: &generator) }
    }
    return data
}

/// Seconds since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
