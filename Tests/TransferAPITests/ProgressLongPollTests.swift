import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// GET /v1/tasks/{tid}/progress?after=V&wait=S: at once when newer, held until a change, timed
/// out with the same version, and the wait capped.
@Suite struct ProgressLongPollTests {
    static let snapshotKeys: Set<String> = ["taskId", "state", "phase", "progress", "error", "version"]

    /// A suspended task in the shared session: nothing changes it unless the test does.
    private func quietTask(_ daemon: DaemonFixture) async throws -> (id: Int, version: Int) {
        let task = try await daemon.dataTask(["url": "http://127.0.0.1:9/quiet"], extra: ["state": "suspended"])
        return (try #require(task.int("id")), try #require(task.int("version")))
    }

    @Test func answersAtOnceWhenTheVersionIsNewer() async throws {
        try await DaemonFixture.with { daemon in
            let (id, version) = try await quietTask(daemon)
            for after in [0, version - 1] {
                let start = ContinuousClock.now
                let response = try await daemon.get("/v1/tasks/\(id)/progress?after=\(after)&wait=10")
                let elapsed = seconds(since: start)
                #expect(response.status == 200)
                let snapshot = try response.object()
                #expect(Set(snapshot.keys) == Self.snapshotKeys)
                #expect(snapshot.int("taskId") == id)
                #expect(snapshot.int("version") == version)
                #expect(snapshot.string("state") == "suspended")
                #expect(snapshot.string("phase") == "queued")
                #expect(snapshot.isNull("error"))
                #expect(snapshot.value(at: "progress.bytesReceived") as? Int == 0)
                #expect(elapsed < 1, "after=\(after) took \(elapsed) s")
            }
            // wait=0 (or none) answers at once even when nothing is newer.
            for query in ["after=\(version)&wait=0", "after=\(version)", ""] {
                let start = ContinuousClock.now
                let snapshot = try await daemon.get("/v1/tasks/\(id)/progress?\(query)").object()
                #expect(snapshot.int("version") == version)
                #expect(seconds(since: start) < 1, "\(query)")
            }
        }
    }

    @Test func heldPollIsAnsweredWhenTheTaskChanges() async throws {
        try await DaemonFixture.with { daemon in
            let (id, version) = try await quietTask(daemon)
            let pollClient = daemon.newClient()
            let start = ContinuousClock.now
            async let held = daemon.request("GET", "/v1/tasks/\(id)/progress?after=\(version)&wait=20", client: pollClient)
            try await waitUntilHeld(daemon, count: 1)
            let heldFor = seconds(since: start)

            let patched = try await daemon.patch("/v1/tasks/\(id)", json: ["description": "changed"])
            #expect(patched.status == 200)
            let newVersion = try #require(try patched.object().int("version"))
            #expect(newVersion > version)

            let response = try await held
            let elapsed = seconds(since: start)
            #expect(response.status == 200)
            let snapshot = try response.object()
            #expect(snapshot.int("version") == newVersion)
            #expect(elapsed >= heldFor && elapsed < 5, "answered after \(elapsed) s")
            #expect(daemon.daemon.service.heldLongPolls == 0)
        }
    }

    @Test func pollsWithDifferentCursorsAreAnsweredByTheirOwnChange() async throws {
        try await DaemonFixture.with { daemon in
            let (id, version) = try await quietTask(daemon)
            // One waits for the next version, the other for the one after it.
            let near = daemon.newClient(), far = daemon.newClient()
            async let nearPoll = daemon.request("GET", "/v1/tasks/\(id)/progress?after=\(version)&wait=20", client: near)
            async let farPoll = daemon.request("GET", "/v1/tasks/\(id)/progress?after=\(version + 1)&wait=20", client: far)
            try await waitUntilHeld(daemon, count: 2)
            _ = try await daemon.patch("/v1/tasks/\(id)", json: ["description": "one"])
            #expect(try await nearPoll.object().int("version") == version + 1)
            try await waitUntilHeld(daemon, count: 1)
            #expect(daemon.daemon.service.heldLongPolls == 1)
            _ = try await daemon.patch("/v1/tasks/\(id)", json: ["description": "two"])
            #expect(try await farPoll.object().int("version") == version + 2)
        }
    }

    @Test func pollTimesOutWithTheUnchangedVersion() async throws {
        try await DaemonFixture.with { daemon in
            let (id, version) = try await quietTask(daemon)
            let start = ContinuousClock.now
            let response = try await daemon.get("/v1/tasks/\(id)/progress?after=\(version)&wait=1.2")
            let elapsed = seconds(since: start)
            #expect(response.status == 200)
            let snapshot = try response.object()
            #expect(snapshot.int("version") == version)
            #expect(snapshot.string("state") == "suspended")
            #expect(elapsed >= 1.2 && elapsed < 4, "answered after \(elapsed) s")
            #expect(daemon.daemon.service.heldLongPolls == 0)
        }
    }

    @Test(arguments: ["30", "61", "1e9"])
    func waitIsCapped(wait: String) async throws {
        try await DaemonFixture.with(configure: { $0.service.maxLongPollWait = 1 }) { daemon in
            let (id, version) = try await quietTask(daemon)
            let start = ContinuousClock.now
            let response = try await daemon.get("/v1/tasks/\(id)/progress?after=\(version)&wait=\(wait)")
            let elapsed = seconds(since: start)
            #expect(response.status == 200, "\(response)")
            #expect(try response.object().int("version") == version)
            #expect(elapsed >= 1 && elapsed < 4, "wait=\(wait) held \(elapsed) s with a 1 s cap")

            let events = try await daemon.events("shared", after: 1_000_000, wait: Double(wait) ?? 30)
            #expect(events.events.isEmpty)
            #expect(seconds(since: start) < 8)
        }
    }

    @Test func heldPollIsAnsweredWhenTheDaemonStops() async throws {
        try await DaemonFixture.with { daemon in
            let (id, version) = try await quietTask(daemon)
            let pollClient = daemon.newClient()
            let start = ContinuousClock.now
            async let held = daemon.request("GET", "/v1/tasks/\(id)/progress?after=\(version)&wait=30", client: pollClient)
            try await waitUntilHeld(daemon, count: 1)
            daemon.stop()
            let response = try await held
            #expect(seconds(since: start) < 10)
            // Answered with the current state (or refused as shutting down), never left hanging.
            if response.status == 200 {
                #expect(try response.object().int("version") == version)
            } else {
                #expect(response.status == 503)
                #expect(response.errorCode == "shutting_down")
            }
        }
    }

    @Test func progressOfARunningTransferMovesForward() async throws {
        let payload = Data(repeating: 0xAB, count: 20_000)
        let origin = try OriginServer { _ in
            .slowBody(body: payload, bytesPerWrite: 2000, interval: .milliseconds(400))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.dataTask(["url": origin.url("/slow")]).int("id"))
            var after = 0
            var received: [Int] = []
            var versions: [Int] = []
            for _ in 0..<200 {
                let snapshot = try await daemon.get("/v1/tasks/\(id)/progress?after=\(after)&wait=5").object()
                let version = try #require(snapshot.int("version"))
                #expect(version > after)
                after = version
                versions.append(version)
                received.append(snapshot.value(at: "progress.bytesReceived") as? Int ?? -1)
                if snapshot.string("state") == "completed" {
                    #expect(snapshot.string("phase") == "done")
                    #expect(snapshot.value(at: "progress.fractionCompleted") as? Double == 1)
                    break
                }
            }
            #expect(received.last == payload.count)
            #expect(received == received.sorted(), "bytesReceived went backwards: \(received)")
            #expect(received.filter { $0 > 0 && $0 < payload.count }.count >= 2, "no intermediate progress seen: \(received)")
            #expect(versions == versions.sorted())
        }
    }
}
