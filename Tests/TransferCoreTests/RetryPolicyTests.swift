import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `Backoff`, `RetryAfter`, `AttemptFailure` and `RetryPolicy` on their own: no I/O, fixed clocks.
@Suite struct RetryPolicyTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let policy = RetryPolicy(backoff: Backoff(base: 1, cap: 60), connectivity: Backoff(base: 1, cap: 8))

    // MARK: Backoff

    @Test func backoffWaitsStayWithinHalfToAllOfTheCeilingAndNeverShrinkUntilTheCap() {
        let backoff = Backoff(base: 0.5, cap: 10)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var previous = 0.0
            for attempt in 0..<12 {
                let ceiling = min(10, 0.5 * pow(2, Double(attempt)))
                let delay = backoff.delay(attempt: attempt, using: &random)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay)")
                #expect(delay >= previous || ceiling == 10, "attempt \(attempt): \(delay) after \(previous)")
                previous = delay
            }
        }
        #expect(backoff.ceiling(attempt: 10_000) == 10)
    }

    @Test func backoffJittersAcrossTasks() {
        let delays = Set((0..<50).map { _ in Backoff(base: 1, cap: 60).delay(attempt: 3) })
        #expect(delays.count > 40, "50 draws gave only \(delays.count) distinct waits")
    }

    // MARK: Retry-After

    @Test(arguments: [
        ("120", 120.0), (" 3 ", 3.0), ("0", 0.0),
        ("Tue, 14 Nov 2023 22:13:40 GMT", 20.0),     // IMF-fixdate, 20 s after `now`
        ("Tuesday, 14-Nov-23 22:13:50 GMT", 30.0),   // RFC 850
        ("Tue Nov 14 22:13:25 2023", 5.0),           // asctime
        ("Tue, 14 Nov 2023 22:00:00 GMT", 0.0),      // in the past: no wait
    ])
    func retryAfterReadsSecondsAndAllThreeDateForms(value: String, seconds: Double) {
        #expect(RetryAfter.seconds(value, now: now) == seconds)
    }

    @Test(arguments: ["", "soon", "-5", "1.5", "Tue, 32 Nov 2023 22:13:40 GMT", "Tue, 14 Foo 2023 22:13:40 GMT", "14 Nov 2023"])
    func retryAfterRejectsWhatIsNeitherForm(value: String) {
        #expect(RetryAfter.seconds(value, now: now) == nil)
    }

    @Test func httpDateMatchesFoundationsCalendarArithmetic() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT") == Date(timeIntervalSince1970: 951_825_600))
    }

    // MARK: classifying an attempt

    private func task(_ kind: TaskKind = .data, response: ResponseInfo? = nil, sent: Int = 0) -> TransferTask {
        let request = RequestInfo(url: "http://h/", method: "GET", headers: [:], bodyLength: nil, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60, networkServiceType: .default)
        var task = TransferTask(id: 1, sessionId: "s", kind: kind, state: .running, priority: .default, description: nil, request: request, owner: nil, now: now)
        task.response = response
        task.progress.bytesSent = sent
        return task
    }

    private func response(_ status: Int, _ headers: [String: String] = [:]) -> ResponseInfo {
        ResponseInfo(statusCode: status, headers: headers, url: "http://h/")
    }

    @Test func aDataTasksTransientStatusIsRetriableWithItsRetryAfter() {
        let outcome = TransferOutcome.success(body: Data(), response: response(503, ["retry-after": "7"]), location: nil)
        #expect(AttemptFailure(outcome, of: task(), now: now) == .transient(error: nil, statusCode: 503, retryAfter: 7))
        for status in [408, 429, 500, 502, 504, 599] {
            #expect(AttemptFailure(.success(body: Data(), response: response(status), location: nil), of: task(), now: now)?.statusCode == status)
        }
        for status in [200, 204, 304, 400, 401, 403, 404, 409, 410, 416, 499] {
            #expect(AttemptFailure(.success(body: Data(), response: response(status), location: nil), of: task(), now: now) == nil, "\(status)")
        }
    }

    @Test func aDownloadIsJudgedByTheStatusThatFailedIt() {
        let failed = TransferOutcome.failure(TaskError(.fileDoesNotExist, "the server answered 503"))
        #expect(AttemptFailure(failed, of: task(.download, response: response(503)), now: now)?.statusCode == 503)
        #expect(AttemptFailure(.failure(TaskError(.fileDoesNotExist, "404")), of: task(.download, response: response(404)), now: now) == nil)
    }

    @Test func connectFailuresAreUnreachableAndLaterFailuresTransient() {
        let refused = TaskError(.cannotConnectToHost, "refused")
        #expect(AttemptFailure(.failure(refused), of: task(), now: now) == .unreachable(refused))
        #expect(AttemptFailure(.failure(TaskError(.cannotFindHost, "dns")), of: task(), now: now) == .unreachable(TaskError(.cannotFindHost, "dns")))
        let timedOut = TaskError(.timedOut, "idle")
        #expect(AttemptFailure(.failure(timedOut), of: task(), now: now) == .unreachable(timedOut))
        #expect(AttemptFailure(.failure(timedOut), of: task(response: response(200)), now: now) == .transient(error: timedOut, statusCode: nil, retryAfter: nil))
        #expect(AttemptFailure(.failure(timedOut), of: task(sent: 10), now: now) == .transient(error: timedOut, statusCode: nil, retryAfter: nil))
        let lost = TaskError(.networkConnectionLost, "reset")
        #expect(AttemptFailure(.interrupted(lost, ResumeState(offset: 5, etag: "\"e\"")), of: task(.download, response: response(200)), now: now) == .transient(error: lost, statusCode: nil, retryAfter: nil))
        for code in [URLErrorCode.cancelled, .badURL, .unsupportedURL, .httpTooManyRedirects, .serverCertificateUntrusted, .dataLengthExceedsMaximum, .cannotWriteToFile] {
            #expect(AttemptFailure(.failure(TaskError(code, "no")), of: task(), now: now) == nil, "\(code)")
        }
    }

    // MARK: deciding

    private func decide(_ failure: AttemptFailure?, _ kind: SessionKind, waits: Bool = false, retries: Int = 0, tries: Int = 0, deadlineIn: Double = 3_600) -> RetryPolicy.Decision {
        policy.decide(failure, session: kind, waitsForConnectivity: waits, retries: retries, waits: tries, now: now, deadline: now.addingTimeInterval(deadlineIn))
    }

    @Test func onlyBackgroundSessionsRetryTransientFailures() {
        let failure = AttemptFailure.transient(error: nil, statusCode: 503, retryAfter: nil)
        guard case .retry(let delay) = decide(failure, .background, retries: 2) else { Issue.record("no retry"); return }
        #expect(delay >= 2 && delay <= 4)
        #expect(decide(failure, .default) == .finish)
        #expect(decide(failure, .ephemeral) == .finish)
        #expect(decide(failure, .default, waits: true) == .finish)  // waiting is for connectivity only
        #expect(decide(nil, .background) == .finish)
    }

    @Test func retryAfterIsTheLeastWaitUpToTheCap() {
        let asked = AttemptFailure.transient(error: nil, statusCode: 429, retryAfter: 30)
        #expect(decide(asked, .background) == .retry(after: 30))
        let far = AttemptFailure.transient(error: nil, statusCode: 503, retryAfter: 86_400)
        #expect(decide(far, .background) == .retry(after: 60))
        let short = AttemptFailure.transient(error: nil, statusCode: 503, retryAfter: 0)
        guard case .retry(let delay) = decide(short, .background, retries: 3) else { Issue.record("no retry"); return }
        #expect(delay >= 4)  // the backoff still applies
    }

    @Test func noAttemptStartsAfterTheResourceDeadline() {
        let failure = AttemptFailure.transient(error: TaskError(.networkConnectionLost, "reset"), statusCode: nil, retryAfter: 10)
        #expect(decide(failure, .background, deadlineIn: 10) == .finish)
        #expect(decide(failure, .background, deadlineIn: 10.5) == .retry(after: 10))
        let refused = AttemptFailure.unreachable(TaskError(.cannotConnectToHost, "refused"))
        guard case .stopWaiting(let error) = decide(refused, .default, waits: true, deadlineIn: 0.1) else { Issue.record("kept waiting"); return }
        #expect(error.code == URLErrorCode.timedOut.rawValue)
        #expect(error.message.contains("refused"))
    }

    @Test func unreachableHostsWaitInBackgroundSessionsAndWhenAskedOtherwiseFail() {
        let refused = AttemptFailure.unreachable(TaskError(.cannotConnectToHost, "refused"))
        guard case .wait(let first) = decide(refused, .default, waits: true) else { Issue.record("did not wait"); return }
        #expect(first >= 0.5 && first <= 1)
        guard case .wait(let later) = decide(refused, .background, tries: 10) else { Issue.record("did not wait"); return }
        #expect(later >= 4 && later <= 8)  // the connectivity cap
        #expect(decide(refused, .default) == .finish)
        #expect(decide(refused, .ephemeral) == .finish)
        #expect(decide(refused, .ephemeral, waits: true) != .finish)
    }
}
