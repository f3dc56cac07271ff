import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Retries and waiting for connectivity as a client sees them over HTTP: the task's
/// `retryCount`, and the `willRetry` and `taskIsWaitingForConnectivity` events with their fields.
@Suite struct RetryAPITests {
    @Test func aRetriedTaskShowsItsRetryCountAndWillRetryEvents() async throws {
        let origin = try OriginServer { request in
            request.index == 0 ? .text("busy", status: 503, headers: ["Retry-After": "0"]) : .text("done")
        }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.retryBackoff = Backoff(base: 0.1, cap: 0.2) }) { daemon in
            let sid = try #require(try await daemon.createSession(["kind": "background", "identifier": "retry-api"]).string("id"))
            let created = try await daemon.dataTask(in: sid, ["url": origin.url("/busy")])
            #expect(created.int("retryCount") == 0)
            let id = try #require(created.int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.int("retryCount") == 1)
            #expect(task.object("response")?.int("statusCode") == 200)

            let events = try await daemon.allEvents(sid).filter { $0.int("taskId") == id }
            let types = events.compactMap { $0.string("type") }
            #expect(types.first == "didReceiveResponse" && Array(types.suffix(2)) == ["didFinishCollectingMetrics", "didCompleteWithError"], "\(types)")
            #expect(types.filter { $0 == "didFinishCollectingMetrics" }.count == 1, "metrics once for the whole task, not per attempt: \(types)")
            let retry = try #require(events.first { $0.string("type") == "willRetry" })
            #expect(retry.int("attempt") == 2)
            #expect(retry.int("statusCode") == 503)
            #expect(retry["error"] is NSNull)
            let delay = try #require(retry["delay"] as? Double)
            #expect(delay >= 0.05 && delay <= 0.1)
            // The retry comes after the first answer and before the second.
            let retryIndex = try #require(types.firstIndex(of: "willRetry"))
            #expect(types[..<retryIndex].contains("didReceiveResponse") && types[retryIndex...].contains("didReceiveResponse"))
        }
    }

    @Test func aWaitingTaskReportsTaskIsWaitingForConnectivityWithItsError() async throws {
        // Held refusing for the whole test: a port merely freed was taken by a parallel test's
        // origin once, and the task then got an answer.
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let port = refusing.port
        try await DaemonFixture.with(configure: { $0.service.connectivityBackoff = Backoff(base: 0.1, cap: 0.2) }) { daemon in
            let session = try await daemon.createSession(["configuration": ["waitsForConnectivity": true, "timeoutIntervalForResource": 0.8]])
            #expect(session.object("configuration")?["waitsForConnectivity"] as? Bool == true)
            let sid = try #require(session.string("id"))
            let id = try #require(try await daemon.dataTask(in: sid, ["url": "http://127.0.0.1:\(port)/none"]).int("id"))
            let task = try await daemon.waitForCompletion(id)
            #expect(task.object("error")?.string("name") == "timedOut")
            let events = try await daemon.allEvents(sid)
            #expect(events.compactMap { $0.string("type") } == ["taskIsWaitingForConnectivity", "didFinishCollectingMetrics", "didCompleteWithError"])
            #expect(events.first?.object("error")?.string("name") == "cannotConnectToHost")
        }
    }
}
