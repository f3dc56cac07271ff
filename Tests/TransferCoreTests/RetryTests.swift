import Foundation
import Synchronization
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService
internal import JSONModel

/// Background sessions retry transient failures with backoff and Retry-After, within the
/// resource timeout; other sessions report them at once. Against an in-process origin that
/// fails N times then succeeds, with the origin's own clock measuring the gaps.
@Suite struct RetryTests {
    /// Small waits so every test takes a second or two: retry n waits [d/2, d], d = 0.2 · 2ⁿ s.
    static func fastRetries(_ configuration: inout ServiceConfiguration) {
        configuration.retryBackoff = Backoff(base: 0.2, cap: 2)
        configuration.connectivityBackoff = Backoff(base: 0.2, cap: 0.4)
    }

    @Test func aBackgroundDataTaskRetriesTransientStatusesWithGrowingWaitsThenSucceeds() async throws {
        let statuses = [503, 500, 429]
        let origin = try OriginServer { request in
            request.index < statuses.count ? .text("busy", status: statuses[request.index]) : .text("done")
        }
        defer { origin.stop() }
        let harness = try ServiceHarness(Self.fastRetries)
        defer { harness.stop() }
        let session = try harness.backgroundSession()

        let task = try await harness.completion(try harness.task(in: session, origin.url("/flaky")).id)
        #expect(task.error == nil)
        #expect(task.response?.statusCode == 200)
        #expect(try harness.service.body(task: task.id, owner: nil).body == Data("done".utf8))
        #expect(task.retryCount == 3)

        let requests = origin.requests
        try #require(requests.count == 4)
        let gaps = zip(requests, requests.dropFirst()).map { seconds(from: $0.receivedAt, to: $1.receivedAt) }
        let retries = try await harness.events(session).filter { $0.type == .willRetry }
        #expect(retries.map { $0.fields["attempt"] } == [.integer(2), .integer(3), .integer(4)])
        #expect(retries.map { $0.fields["statusCode"] } == statuses.map { .integer(Int64($0)) })
        for (index, (gap, event)) in zip(gaps, retries).enumerated() {
            guard case .number(let delay) = event.fields["delay"] else { Issue.record("no delay in \(event)"); continue }
            let ceiling = 0.2 * pow(2, Double(index))
            #expect(delay >= ceiling / 2 && delay <= ceiling, "retry \(index + 1) waited \(delay) s")
            #expect(gap >= delay, "retry \(index + 1) came \(gap) s after the failure, before its \(delay) s wait")
        }
        #expect(gaps[2] > gaps[0], "the waits did not grow: \(gaps)")
    }

    @Test func retryAfterIsHonouredAsSecondsAndAsAnHTTPDate() async throws {
        // The second failure names a date 1 to 2 s ahead (an HTTP-date has whole seconds).
        let dateWait = Mutex(0.0)
        let origin = try OriginServer { request in
            switch request.index {
            case 0:
                return .text("later", status: 503, headers: ["Retry-After": "1"])
            case 1:
                let now = Date()
                let target = Date(timeIntervalSince1970: floor(now.timeIntervalSince1970) + 2)
                dateWait.withLock { $0 = target.timeIntervalSince(now) }
                return .text("slow down", status: 429, headers: ["Retry-After": httpDate(target)])
            default:
                return .text("done")
            }
        }
        defer { origin.stop() }
        let harness = try ServiceHarness { $0.retryBackoff = Backoff(base: 0.05, cap: 5) }
        defer { harness.stop() }
        let session = try harness.backgroundSession()

        let task = try await harness.completion(try harness.task(in: session, origin.url("/busy")).id)
        #expect(task.error == nil && task.response?.statusCode == 200)
        let requests = origin.requests
        try #require(requests.count == 3)
        let first = seconds(from: requests[0].receivedAt, to: requests[1].receivedAt)
        let second = seconds(from: requests[1].receivedAt, to: requests[2].receivedAt)
        #expect(first >= 1, "Retry-After: 1 was followed after \(first) s")
        let asked = dateWait.withLock { $0 }
        #expect(second >= asked - 0.02, "Retry-After for \(asked) s ahead was followed after \(second) s")
        #expect(first < 2.5 && second < 3.5, "waited far longer than asked: \(first), \(second)")
    }

    @Test func aDefaultSessionReportsTheSameStatusAtOnce() async throws {
        let origin = try OriginServer { _ in .text("busy", status: 503, headers: ["Retry-After": "1"]) }
        defer { origin.stop() }
        let harness = try ServiceHarness(Self.fastRetries)
        defer { harness.stop() }
        let session = try harness.session()

        let task = try await harness.completion(try harness.task(in: session, origin.url("/busy")).id)
        #expect(task.error == nil)  // an HTTP error status is a response for a data task
        #expect(task.response?.statusCode == 503)
        #expect(task.retryCount == 0)
        #expect(origin.requests.count == 1)
        #expect(try await harness.events(session).allSatisfy { $0.type != .willRetry })
    }

    @Test func theResourceTimeoutEndsTheRetriesWithTheLastResponse() async throws {
        // Every answer asks for 3 s: the second attempt comes at about 3 s, a third would start
        // at about 6 s, after the 5 s resource timeout, so the second answer is the last.
        let origin = try OriginServer { _ in .text("down", status: 503, headers: ["Retry-After": "3"]) }
        defer { origin.stop() }
        let harness = try ServiceHarness { $0.retryBackoff = Backoff(base: 0.05, cap: 5) }
        defer { harness.stop() }
        let session = try harness.backgroundSession { $0.timeoutIntervalForResource = 5 }

        let start = ContinuousClock.now
        let task = try await harness.completion(try harness.task(in: session, origin.url("/down")).id, timeout: 10)
        let elapsed = seconds(since: start)
        #expect(task.error == nil && task.response?.statusCode == 503, "\(String(describing: task.error))")
        #expect(task.retryCount == 1)
        #expect(origin.requests.count == 2)
        // Slack for a loaded machine, still well before the deadline.
        #expect(elapsed >= 3 && elapsed < 4.5, "completed after \(elapsed) s: it should end when no retry fits, not at the deadline")
    }

    @Test func anIdleTimeoutIsRetriedInABackgroundSession() async throws {
        // The first answer stalls after its head; the per-request 1 s idle timeout ends it.
        let origin = try OriginServer { request in
            request.index == 0 ? .stallAfterHeaders(contentLength: 100, bodyPrefix: Data("partial".utf8)) : .text("whole")
        }
        defer { origin.stop() }
        let harness = try ServiceHarness(Self.fastRetries)
        defer { harness.stop() }
        let session = try harness.backgroundSession()

        let start = ContinuousClock.now
        let task = try await harness.completion(try harness.task(in: session, origin.url("/stall"), timeoutInterval: 1).id, timeout: 10)
        #expect(task.error == nil)
        #expect(try harness.service.body(task: task.id, owner: nil).body == Data("whole".utf8))
        #expect(task.retryCount == 1)
        let retry = try #require(try await harness.events(session).first { $0.type == .willRetry })
        guard case .object(let error) = retry.fields["error"] else { Issue.record("willRetry without its error: \(retry)"); return }
        #expect(error["code"] == .integer(Int64(URLErrorCode.timedOut.rawValue)))
        #expect(retry.fields["statusCode"] == .null)
        #expect(seconds(since: start) >= 1)
    }

    @Test func aRetriedDownloadGoesOnFromItsPartialFile() async throws {
        let payload = randomBytes(200_000)
        let headers = ["ETag": "\"v1\""]
        let origin = try OriginServer { request in
            // The first answer ends cleanly after 80 000 bytes of 200 000: the connection is lost.
            request.index == 0
                ? .wrongLength(declared: payload.count, headers: headers, body: payload.prefix(80_000))
                : .ranged(payload, for: request, headers: headers)
        }
        defer { origin.stop() }
        let harness = try ServiceHarness(Self.fastRetries)
        defer { harness.stop() }
        let session = try harness.backgroundSession()

        let created = try harness.service.createTask(in: session, TaskCreate(kind: .download, request: RequestSpec(url: origin.url("/file.bin"))), owner: nil)
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(task.retryCount == 1)
        let location = try #require(task.location)
        #expect(try Data(contentsOf: URL(fileURLWithPath: location)) == payload)
        let requests = origin.requests
        try #require(requests.count == 2)
        #expect(requests[1].header("Range") == "bytes=80000-")
        #expect(requests[1].header("If-Range") == "\"v1\"")
        let resumed = try #require(try await harness.events(session).first { $0.type == .didResumeAtOffset })
        #expect(resumed.fields["fileOffset"] == .integer(80_000))
    }

    @Test func suspendingARetryingTaskKeepsItSuspendedAndResumeTriesAtOnce() async throws {
        let origin = try OriginServer { request in
            request.index == 0 ? .text("later", status: 503, headers: ["Retry-After": "30"]) : .text("now")
        }
        defer { origin.stop() }
        let harness = try ServiceHarness { $0.retryBackoff = Backoff(base: 0.2, cap: 60) }
        defer { harness.stop() }
        let session = try harness.backgroundSession()
        let created = try harness.task(in: session, origin.url("/later"))
        try #require(try await harness.waitFor(created.id, "retrying") { $0.phase == .retrying || $0.state == .completed }.phase == .retrying)

        let suspended = try harness.service.suspend(task: created.id, owner: nil)
        #expect(suspended.state == .suspended && suspended.phase == .queued)
        #expect(harness.service.state.withLock { $0.holds.isEmpty })
        let start = ContinuousClock.now
        _ = try harness.service.resume(task: created.id, owner: nil)
        let task = try await harness.completion(created.id, timeout: 10)
        #expect(task.error == nil && task.response?.statusCode == 200)
        #expect(seconds(since: start) < 5, "resume waited for the old Retry-After")
        #expect(origin.requests.count == 2)
    }

    @Test func cancellingARetryingTaskEndsItAndItsHold() async throws {
        let origin = try OriginServer { _ in .text("later", status: 503, headers: ["Retry-After": "30"]) }
        defer { origin.stop() }
        let harness = try ServiceHarness { $0.retryBackoff = Backoff(base: 0.2, cap: 60) }
        defer { harness.stop() }
        let session = try harness.backgroundSession()
        let created = try harness.task(in: session, origin.url("/later"))
        try #require(try await harness.waitFor(created.id, "retrying") { $0.phase == .retrying || $0.state == .completed }.phase == .retrying)

        let cancelled = try harness.service.cancel(task: created.id, owner: nil)
        #expect(cancelled.state == .completed && cancelled.error?.code == URLErrorCode.cancelled.rawValue)
        #expect(harness.service.state.withLock { $0.holds.isEmpty })
        #expect(origin.requests.count == 1)
    }

    @Test func aTaskHeldWhenTheDaemonStopsIsTriedAgainWhenItStarts() async throws {
        let origin = try OriginServer { request in
            request.index == 0 ? .text("later", status: 503, headers: ["Retry-After": "60"]) : .text("back")
        }
        defer { origin.stop() }
        let folder = try TempDirectory(prefix: "transferd-coretests-retry-restart")
        defer { folder.remove() }
        var configuration = ServiceConfiguration(dataDirectory: folder.path)
        configuration.retryBackoff = Backoff(base: 0.2, cap: 60)
        let first = try TransferService(configuration: configuration)
        first.start()
        let session = try first.createSession(SessionCreate(kind: .background, identifier: "restart"), owner: nil).session.id
        let created = try first.createTask(in: session, TaskCreate(kind: .data, request: RequestSpec(url: origin.url("/later"))), owner: nil)
        try #require(try await first.waitFor(created.id, "retrying") { $0.phase == .retrying || $0.state == .completed }.phase == .retrying)
        first.stop()

        let second = try TransferService(configuration: configuration)
        second.start()
        defer { second.stop() }
        let task = try await second.completion(created.id, timeout: 10)
        #expect(task.error == nil && task.response?.statusCode == 200)
        #expect(task.retryCount == 1)
        #expect(origin.requests.count == 2)
    }
}

extension ServiceHarness {
    /// A new background session (a fresh identifier), configured by `configure`.
    func backgroundSession(_ configure: (inout SessionConfiguration) -> Void = { _ in }) throws -> String {
        var configuration = SessionConfiguration()
        configure(&configuration)
        let create = SessionCreate(kind: .background, identifier: "test-\(UUID().uuidString)", configuration: configuration)
        return try service.createSession(create, owner: nil).session.id
    }
}

/// Seconds from `start` to `end`.
func seconds(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Double {
    let elapsed = end - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), as servers send in Retry-After.
func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}
