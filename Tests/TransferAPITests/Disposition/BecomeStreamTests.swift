import Foundation
import Testing
import TestSupport

/// A data task whose response is answered becomeStream (URLSession's didBecome streamTask): its
/// stream reads give the body as it arrives, and a read waiting when the body ends gets the end.
@Suite struct BecomeStreamTests {
    /// The read waits through the whole transfer (it asks for more than the body holds), so the
    /// task's completion is what answers it, and that answer lets the task go: the completion
    /// once woke it under the service's lock, and the daemon trapped on the lock taken twice
    /// (seen in a run of test_decisions' becomeStream test).
    @Test func aReadWaitingWhenTheBodyEndsGetsTheWholeBodyAndItsEnd() async throws {
        let payload = Data(count: 20_000) { UInt8(truncatingIfNeeded: $0 &* 13) }
        let origin = try OriginServer { _ in
            .slowBody(headers: ["Content-Type": "application/octet-stream"], body: payload, bytesPerWrite: 2_000, interval: .milliseconds(50))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let id = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/slow")], extra: ["decisions": ["response"]]).int("id"))
            var decision: String?
            let deadline = ContinuousClock.now + .seconds(20)
            while decision == nil, ContinuousClock.now < deadline {
                decision = (try await daemon.task(id)["decision"] as? [String: Any])?.string("id")
                if decision == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            let pending = try #require(decision, "no response decision for task \(id)")
            let answered = try await daemon.post("/v1/tasks/\(id)/decisions/\(pending)", json: ["answer": "becomeStream"])
            #expect(answered.status == 200, "\(answered)")

            let read = try await daemon.get("/v1/tasks/\(id)/read?min=65536&max=65536&wait=20")
            #expect(read.status == 200, "\(read)")
            #expect(read.body == payload)
            #expect(read.header("X-Stream-End") == "true")
            let task = try await daemon.waitForCompletion(id)
            #expect(task.isNull("error"), "\(task["error"] ?? "")")
            // Read to its end, the stream is done and the task goes on as a completed data task.
            #expect(try await daemon.body(id).body == payload)
            #expect(try await daemon.task(id).string("state") == "completed")
        }
    }
}
