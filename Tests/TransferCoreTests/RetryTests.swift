import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService
internal import JSONModel

/// Background sessions retry transient failures with backoff, against an in-process origin that
/// fails N times then succeeds, with the origin's own clock measuring the gaps: the real hold
/// timer and libcurl end to end. What is retried, after how long (Retry-After, the resource
/// deadline), and suspend, cancel and restart of a held task are tested on a fake engine
/// (`FakeEngineRetryTests`).
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
