import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService
internal import JSONModel

/// `TransferService` end to end against an in-process `OriginServer`: what a task ends with.
@Suite struct ServiceTransferTests {
    @Test func successDeliversTheExactBodyAndResponse() async throws {
        let body = randomBytes(300_000)
        let origin = try OriginServer { request in
            request.path == "/data?x=1"
                ? .respond(status: 200, headers: ["Content-Type": "application/octet-stream", "X-Custom": "v1", "Set-Cookie": "a=1"], body: body)
                : .respond(status: 404)
        }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session { $0.httpAdditionalHeaders = ["X-Session": "yes"] }

        let created = try harness.task(in: session, origin.url("/data?x=1"))
        #expect(created.state == .running)
        let task = try await harness.completion(created.id)

        #expect(task.error == nil)
        #expect(task.state == .completed)
        #expect(task.phase == .done)
        let response = try #require(task.response)
        #expect(response.statusCode == 200)
        #expect(response.headers["X-Custom"] == "v1")
        #expect(response.expectedContentLength == body.count)
        #expect(response.mimeType == "application/octet-stream")
        #expect(response.url == origin.url("/data?x=1"))
        #expect(task.progress.bytesReceived == body.count)
        #expect(task.progress.bytesExpectedToReceive == body.count)
        #expect(task.completedAt != nil && task.startedAt != nil)

        let (received, contentType) = try harness.service.body(task: created.id, owner: nil)
        #expect(received == body)
        #expect(contentType == "application/octet-stream")

        let requests = origin.requests
        #expect(requests.count == 1)
        #expect(requests.first?.method == "GET")
        #expect(requests.first?.header("X-Session") == "yes")
        #expect(requests.first?.header("Expect") == nil)

        // The feed tells the delegate story in order.
        let events = try await harness.events(session).filter { $0.taskId == created.id }
        let types = events.map(\.type)
        #expect(types.first == .didReceiveResponse)
        #expect(types.last == .didCompleteWithError)
        // A 200 is storable: the URL cache announces it before the metrics and the completion.
        #expect(types.dropLast().last == .didFinishCollectingMetrics, "\(types)")
        #expect(types.dropLast(2).last == .willCacheResponse, "\(types)")
        #expect(types.dropFirst().dropLast(3).allSatisfy { $0 == .didReceiveData }, "\(types)")
        #expect(events.last?.fields["error"] == .null)
        let totals = events.filter { $0.type == .didReceiveData }.compactMap { event -> Int64? in
            if case .integer(let total)? = event.fields["totalBytesReceived"] { return total }
            return nil
        }
        #expect(totals.last == Int64(body.count))
    }

    @Test func aPostBodyIsSentAsGiven() async throws {
        let origin = try OriginServer { request in .respond(status: 201, body: request.body) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session()
        let payload = randomBytes(100_000)
        let created = try harness.task(in: session, origin.url("/upload"), method: "POST", body: .base64(payload))
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(task.response?.statusCode == 201)
        #expect(task.progress.bytesSent == payload.count)
        #expect(origin.requests.first?.method == "POST")
        #expect(origin.requests.first?.body == payload)
        #expect(origin.requests.first?.header("Expect") == nil)  // URLSession sends no 100-continue
        #expect(try harness.service.body(task: created.id, owner: nil).body == payload)
    }

    @Test func serverErrorIsAResponseNotAnError() async throws {
        let origin = try OriginServer { _ in .text("backend exploded", status: 500) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/boom"))
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(task.response?.statusCode == 500)
        #expect(task.response?.textEncodingName == "utf-8")
        #expect(try harness.service.body(task: created.id, owner: nil).body == Data("backend exploded".utf8))
    }

    /// A network failure of `behavior` and the URLError code the task must end with.
    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        let behavior: OriginBehavior
        let code: URLErrorCode
        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(name: "reset mid-body", behavior: .resetMidBody(afterBytes: 20_000, body: randomBytes(200_000)), code: .networkConnectionLost),
        Failure(name: "Content-Length longer than the body, then close", behavior: .wrongLength(declared: 50_000, body: randomBytes(10_000)), code: .networkConnectionLost),
        Failure(name: "close without a response", behavior: .closeWithoutResponse, code: .networkConnectionLost),
        Failure(name: "reset without a response", behavior: .resetWithoutResponse, code: .networkConnectionLost),
        Failure(name: "chunked body cut by a clean close", behavior: .closeDelimited(headers: ["Transfer-Encoding": "chunked"], body: Data("5\r\nhello\r\n".utf8)), code: .networkConnectionLost),
        Failure(name: "gzip body that is not gzip", behavior: .respond(headers: ["Content-Encoding": "gzip"], body: Data("definitely not gzip".utf8)), code: .cannotDecodeContentData),
        Failure(name: "chunked body cut by a reset", behavior: .resetMidBody(afterBytes: 5, headers: ["Transfer-Encoding": "chunked"], body: Data("ffff\r\nabc".utf8)), code: .networkConnectionLost),
    ]

    @Test(arguments: failures)
    func networkFailureEndsInItsErrorNeverInACorruptSuccess(failure: Failure) async throws {
        let origin = try OriginServer { _ in failure.behavior }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, origin.url("/fault"))
        let task = try await harness.completion(created.id)

        let error = try #require(task.error, "\(failure.name) must fail, got \(String(describing: task.response))")
        #expect(error.code == failure.code.rawValue)
        #expect(error.name == failure.code.name)
        #expect(!error.message.isEmpty)
        #expect(task.state == .completed)
        // No body is served or stored for a failed task.
        let refusal = #expect(throws: ServiceError.self) { try harness.service.body(task: created.id, owner: nil) }
        if case .conflict(let code, _)? = refusal { #expect(code == "no_body") } else { Issue.record("expected a conflict, got \(String(describing: refusal))") }
        harness.service.store.flush()
        #expect(try harness.service.store.body(taskId: created.id) == nil)
        // The feed reports the error, never a success, after the task's metrics (once).
        let events = try await harness.events(session)
        #expect(Array(events.suffix(2).map(\.type)) == [.didFinishCollectingMetrics, .didCompleteWithError], "\(events.map(\.type))")
        #expect(events.filter { $0.type == .didFinishCollectingMetrics }.count == 1)
        let completions = events.filter { $0.type == .didCompleteWithError }
        #expect(completions.count == 1)
        if case .object(let fields)? = completions.first?.fields["error"] {
            #expect(fields["code"] == .integer(Int64(failure.code.rawValue)))
        } else {
            Issue.record("didCompleteWithError without an error: \(String(describing: completions.first))")
        }
    }

    @Test func stallAfterHeadersTimesOutAfterTheRequestTimeout() async throws {
        let origin = try OriginServer { _ in .stallAfterHeaders(contentLength: 100_000, bodyPrefix: randomBytes(1_000)) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let start = ContinuousClock.now
        let created = try harness.task(in: try harness.session(), origin.url("/stall"), timeoutInterval: 1)
        let task = try await harness.completion(created.id, timeout: 10)
        let elapsed = seconds(since: start)
        #expect(task.error?.code == URLErrorCode.timedOut.rawValue)
        #expect(task.error?.name == "timedOut")
        #expect(task.response?.statusCode == 200)  // the head had arrived
        #expect(task.progress.bytesReceived == 1_000)
        #expect(elapsed >= 0.9, "timed out after \(elapsed) s, before its 1 s idle timeout")
        #expect(elapsed < 3, "timed out after \(elapsed) s")
        #expect(throws: ServiceError.self) { try harness.service.body(task: created.id, owner: nil) }
    }

    @Test func sessionRequestTimeoutAppliesWhenTheRequestHasNone() async throws {
        let origin = try OriginServer { _ in .stallAfterHeaders(contentLength: 10) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session { $0.timeoutIntervalForRequest = 1 }
        let start = ContinuousClock.now
        let created = try harness.task(in: session, origin.url("/stall"))
        #expect(created.originalRequest.timeoutInterval == 1)
        let task = try await harness.completion(created.id, timeout: 10)
        #expect(task.error?.code == URLErrorCode.timedOut.rawValue)
        #expect(seconds(since: start) < 5)
    }

    @Test func connectionRefusedIsCannotConnectToHost() async throws {
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let port = refusing.port
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), "http://127.0.0.1:\(port)/nothing")
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.cannotConnectToHost.rawValue)
        #expect(task.error?.name == "cannotConnectToHost")
        #expect(task.response == nil)
    }

    @Test func unsupportedSchemeFailsTheTaskAtOnce() async throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), "gopher://127.0.0.1/file")
        #expect(created.state == .completed)
        #expect(created.error?.code == URLErrorCode.unsupportedURL.rawValue)
    }

    @Test func redirectsAreFollowedAndReported() async throws {
        let origin = try OriginServer { request in
            switch request.path {
            case "/start": return .redirect(to: "/middle", status: 301)
            case "/middle": return .redirect(to: "/end", status: 307)
            default: return .text("arrived")
            }
        }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, origin.url("/start"))
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(task.response?.url == origin.url("/end"))
        #expect(task.currentRequest?.url == origin.url("/end"))
        #expect(task.originalRequest.url == origin.url("/start"))
        #expect(try harness.service.body(task: created.id, owner: nil).body == Data("arrived".utf8))
        let redirects = try await harness.events(session).filter { $0.type == .willPerformHTTPRedirection }
        #expect(redirects.map { $0.fields["statusCode"] } == [.integer(301), .integer(307)])
        #expect(origin.requests.map(\.path) == ["/start", "/middle", "/end"])
    }

    @Test func slowBodyArrivesWholeWithCoalescedProgress() async throws {
        let chunks = 200, chunkSize = 512
        let body = randomBytes(chunks * chunkSize)
        let origin = try OriginServer { _ in .slowBody(body: body, bytesPerWrite: chunkSize, interval: .milliseconds(10)) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session()
        let created = try harness.task(in: session, origin.url("/slow"))
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(try harness.service.body(task: created.id, owner: nil).body == body)

        let data = try await harness.events(session).filter { $0.type == .didReceiveData }
        func integer(_ event: TaskEvent, _ key: String) -> Int? {
            if case .integer(let value)? = event.fields[key] { return Int(value) }
            return nil
        }
        let totals = data.compactMap { integer($0, "totalBytesReceived") }
        let increments = data.compactMap { integer($0, "bytesReceived") }
        // Reported about every 0.1 s over a transfer of about 2 s: far fewer events than chunks.
        #expect(data.count >= 2, "a slow transfer should report progress along the way")
        #expect(data.count <= chunks / 5, "\(data.count) didReceiveData events for \(chunks) chunks")
        #expect(increments.reduce(0, +) == body.count)
        #expect(totals.last == body.count)
        #expect(totals == totals.sorted() && Set(totals).count == totals.count)
        #expect(data.allSatisfy { integer($0, "totalBytesExpectedToReceive") == body.count })
    }

    @Test func bodyLargerThanTheLimitFailsWithDataLengthExceedsMaximum() async throws {
        let origin = try OriginServer { _ in .respond(body: randomBytes(64 * 1024)) }
        defer { origin.stop() }
        let harness = try ServiceHarness { $0.maxDataTaskBodySize = 10_000 }
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/big"))
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.dataLengthExceedsMaximum.rawValue)
    }

    @Test func resourceTimeoutEndsATransferThatKeepsMoving() async throws {
        // Bytes keep arriving (no idle timeout), but the whole transfer may take only 1 s.
        let origin = try OriginServer { _ in .slowBody(body: randomBytes(100 * 1_024), bytesPerWrite: 1_024, interval: .milliseconds(50)) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session { $0.timeoutIntervalForResource = 1 }
        let start = ContinuousClock.now
        let created = try harness.task(in: session, origin.url("/slow"))
        let task = try await harness.completion(created.id, timeout: 10)
        let elapsed = seconds(since: start)
        #expect(task.error?.code == URLErrorCode.timedOut.rawValue)
        #expect(task.progress.bytesReceived > 0)
        #expect(elapsed >= 0.9 && elapsed < 4, "ended after \(elapsed) s")
    }

    @Test func aRedirectLoopFailsWithTooManyRedirects() async throws {
        let origin = try OriginServer { request in .redirect(to: "/loop?\(request.index + 1)") }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/loop?0"))
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.httpTooManyRedirects.rawValue)
        #expect(origin.requests.count == Transfer.maxRedirects + 1)
    }

    @Test func aRedirectToAnotherSchemeIsRefused() async throws {
        let origin = try OriginServer { _ in .redirect(to: "ftp://127.0.0.1/file") }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/away"))
        let task = try await harness.completion(created.id)
        #expect(task.error?.code == URLErrorCode.unsupportedURL.rawValue)
        #expect(origin.requests.count == 1)
    }

    @Test func noContentIsASuccessWithAnEmptyBody() async throws {
        let origin = try OriginServer { _ in .respond(status: 204, headers: ["X-Done": "1"]) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let created = try harness.task(in: try harness.session(), origin.url("/empty"))
        let task = try await harness.completion(created.id)
        #expect(task.error == nil)
        #expect(task.response?.statusCode == 204)
        #expect(task.response?.headers["X-Done"] == "1")
        #expect(try harness.service.body(task: created.id, owner: nil).body.isEmpty)
        harness.service.store.flush()
        #expect(try harness.service.store.body(taskId: created.id) == Data())
    }
}
