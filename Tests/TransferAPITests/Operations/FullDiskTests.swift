import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// The data folder on a disk that fills up (a small tmpfs the test mounts): a 2xx for a write
/// means it is committed. A write the store cannot commit is answered 507
/// `insufficient_storage`, is not listed, is counted in /metrics and fails /readyz until space
/// comes back; after a restart every acknowledged session and task is there and no refused one
/// is (sessions, a task, a batch of tasks).
@Suite(.serialized) struct FullDiskTests {
    @Test func aFullDiskRefusesWritesUntilSpaceReturnsAndKeepsEveryAcknowledgedOne() async throws {
        let disk = try SmallDisk(megabytes: 16)
        defer { disk.unmount() }
        try await DaemonFixture.with(configure: { $0.service.dataDirectory = disk.path + "/data" }) { daemon in
            var acknowledged: Set<String> = []
            var refused: Set<String> = []
            for index in 0..<5 {
                let response = try await daemon.post("/v1/sessions", json: ["description": "before-\(index)"])
                try #require(response.status == 201, "\(response)")
                acknowledged.insert("before-\(index)")
            }
            #expect(try await Self.failures(daemon) == 0)

            let filled = disk.fill("filler")
            #expect(filled > 1 << 20, "the filler took \(filled) bytes")
            // The WAL may hold a few more frames in pages it already has: create until refused.
            for index in 0..<2_000 {
                let description = "full-\(index)"
                let response = try await daemon.post("/v1/sessions", json: ["description": description])
                if response.status == 201 {
                    acknowledged.insert(description)
                    continue
                }
                #expect(response.status == 507, "\(response)")
                #expect(response.errorCode == "insufficient_storage", "\(response)")
                #expect(response.error?.string("message")?.contains("not committed") == true, "\(response)")
                refused.insert(description)
                break
            }
            try #require(!refused.isEmpty, "no create was refused on a full disk")
            // Still full: another session is refused, and so is a task in a live session.
            let again = try await daemon.post("/v1/sessions", json: ["description": "full-again"])
            #expect(again.status == 507, "\(again)")
            refused.insert("full-again")
            let task = try await daemon.post("/v1/sessions/shared/tasks", json: Self.task("refused-task"))
            #expect(task.status == 507, "\(task)")
            let batch = try await daemon.post("/v1/sessions/shared/tasks:batch", json: ["tasks": (0..<3).map { Self.task("refused-batch-\($0)") }])
            #expect(batch.status == 507, "\(batch)")

            let notReady = try await daemon.get("/readyz")
            #expect(notReady.status == 503, "\(notReady)")
            #expect(notReady.errorCode == "insufficient_storage", "\(notReady)")
            #expect(try await Self.failures(daemon) >= 1)
            let listed = try await Self.descriptions(daemon)
            #expect(listed.isDisjoint(with: refused), "refused sessions listed: \(listed.intersection(refused))")
            #expect(acknowledged.isSubset(of: listed))
            #expect(try await Self.taskDescriptions(daemon).isEmpty, "refused tasks are listed")

            disk.free("filler")
            let after = try await daemon.post("/v1/sessions", json: ["description": "after"])
            #expect(after.status == 201, "\(after)")
            acknowledged.insert("after")
            #expect(try await daemon.get("/readyz").status == 200)
            let acknowledgedTask = try await daemon.post("/v1/sessions/shared/tasks", json: Self.task("after-task"))
            #expect(acknowledgedTask.status == 201, "\(acknowledgedTask)")

            daemon.stop()
            let restarted = try daemon.restarted()
            defer { restarted.stop() }
            let kept = try await Self.descriptions(restarted)
            #expect(acknowledged.isSubset(of: kept), "acknowledged but lost: \(acknowledged.subtracting(kept))")
            #expect(kept.isDisjoint(with: refused), "refused but stored: \(kept.intersection(refused))")
            #expect(try await Self.taskDescriptions(restarted) == ["after-task"])
        }
    }

    /// A suspended data task (it never runs) described `description`.
    static func task(_ description: String) -> [String: Any] {
        ["kind": "data", "state": "suspended", "description": description, "request": ["url": "http://127.0.0.1:9/"]]
    }

    /// The descriptions of the shared session's tasks.
    static func taskDescriptions(_ daemon: DaemonFixture) async throws -> [String] {
        let items = try await daemon.get("/v1/sessions/shared/tasks?limit=1000").object()["items"] as? [[String: Any]] ?? []
        return items.compactMap { $0.string("description") }
    }

    /// Every session's description, through the paginated list.
    static func descriptions(_ daemon: DaemonFixture) async throws -> Set<String> {
        var found: Set<String> = []
        var cursor: String?
        repeat {
            let page = try await daemon.get("/v1/sessions?limit=1000" + (cursor.map { "&cursor=\($0)" } ?? "")).object()
            for item in page["items"] as? [[String: Any]] ?? [] {
                if let description = item.string("description") { found.insert(description) }
            }
            cursor = page["next"] as? String
        } while cursor != nil
        return found
    }

    /// `transferd_store_commit_failures_total{reason="disk_full"}`.
    static func failures(_ daemon: DaemonFixture) async throws -> Double {
        let metrics = try PrometheusText(try await daemon.get("/metrics").text)
        let sample = metrics.samples.first { $0.name == "transferd_store_commit_failures_total" && $0.labels["reason"] == "disk_full" }
        return try #require(sample).value
    }
}
