import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// The scheduler made visible: `GET /v1/queue` lists queued tasks in admission order with class,
/// priority and what each waits for; `GET /v1/stats` counts and rates per class.
@Suite struct QueueAndStatsTests {
    @Test func theQueueIsListedInAdmissionOrderAndFollowsAPatch() async throws {
        let origin = try OriginServer { request in
            request.path == "/stall" ? .stallAfterHeaders(contentLength: 10) : .text(request.path)
        }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { $0.service.maxConcurrentTransfers = 1; $0.service.nodeId = "node-a" }) { daemon in
            let blocker = try #require(try await daemon.dataTask(["url": origin.url("/stall")]).int("id"))
            try await daemon.waitForTask(blocker) { $0.string("phase") == "transferring" }
            func create(_ path: String, _ type: String, _ priority: Any) async throws -> Int {
                try #require(try await daemon.dataTask(["url": origin.url(path), "networkServiceType": type], extra: ["priority": priority]).int("id"))
            }
            let background = try await create("/bg", "background", "high")
            let low = try await create("/low", "default", "low")
            let high = try await create("/high", "default", 0.9)
            let voice = try await create("/voice", "voice", 0.1)

            let page = try await daemon.get("/v1/queue").object()
            #expect(page.int("total") == 4)
            let tasks = try #require(page["tasks"] as? [[String: Any]])
            #expect(tasks.compactMap { $0.int("taskId") } == [voice, high, low, background])
            #expect(tasks.compactMap { $0.int("position") } == [1, 2, 3, 4])
            #expect(tasks.compactMap { $0.string("schedulingClass") } == ["interactive", "default", "default", "background"])
            #expect(tasks.compactMap { $0.double("priority") } == [0.1, 0.9, 0.25, 0.75])
            #expect(tasks.allSatisfy { $0.string("waitingFor") == "globalCap" && $0.string("sessionId") == "shared" })
            #expect(try await daemon.task(voice).string("schedulingClass") == "interactive")

            let firstTwo = try await daemon.get("/v1/queue?limit=2").object()
            #expect((firstTwo["tasks"] as? [Any])?.count == 2 && firstTwo.int("total") == 4)
            #expect(try await daemon.get("/v1/queue?limit=0").errorCode == "invalid_query")

            #expect(try await daemon.patch("/v1/tasks/\(low)", json: ["priority": 1.0]).status == 200)
            let reordered = try await daemon.get("/v1/queue").object()
            #expect((reordered["tasks"] as? [[String: Any]])?.compactMap { $0.int("taskId") } == [voice, low, high, background])

            let stats = try await daemon.get("/v1/stats").object()
            #expect(stats.int("running") == 1 && stats.int("queued") == 4 && stats.int("maxConcurrentTransfers") == 1)
            #expect(stats.value(at: "classes.interactive.queued") as? Int == 1)
            #expect(stats.value(at: "classes.default.queued") as? Int == 2)

            // On SQLite the daemon is a cluster of one: itself, with the same load.
            let cluster = try await daemon.get("/v1/cluster").object()
            #expect(cluster.string("database") == "sqlite" && cluster.string("node") == "node-a")
            let nodes = try #require(cluster["nodes"] as? [[String: Any]])
            #expect(nodes.count == 1)
            #expect(nodes.first?.string("id") == "node-a" && nodes.first?.string("address") == "127.0.0.1:\(daemon.port)")
            #expect(nodes.first.map { [$0.int("running"), $0.int("queued"), $0.int("maxConcurrentTransfers"), $0.int("leasedTasks")] } == [1, 4, 1, 0])
            #expect(stats.value(at: "classes.default.running") as? Int == 1)
            #expect(stats.value(at: "classes.background.queued") as? Int == 1)

            #expect(try await daemon.post("/v1/tasks/\(blocker)/cancel").status == 200)
            for id in [voice, low, high, background] { #expect(try await daemon.waitForCompletion(id).isNull("error")) }
            #expect(origin.requests.map(\.path) == ["/stall", "/voice", "/low", "/high", "/bg"])
            let drained = try await daemon.get("/v1/queue").object()
            #expect(drained.int("total") == 0)
        }
    }

    @Test func statsShowBytesAndRatesPerClassWhileATransferRuns() async throws {
        let body = Data(count: 2 << 20)
        let origin = try OriginServer { _ in .slowBody(body: body, bytesPerWrite: 16 << 10, interval: .milliseconds(40)) }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.dataTask(["url": origin.url("/slow"), "networkServiceType": "background"]).int("id"))
            try await daemon.waitForTask(id) { ($0.value(at: "progress.bytesReceived") as? Int ?? 0) > 256 << 10 }
            // Rates are sampled once a second: look for a while, not once.
            var rate = 0.0
            var stats: [String: Any] = [:]
            for _ in 0..<40 where rate == 0 {
                stats = try await daemon.get("/v1/stats").object()
                rate = stats.value(at: "classes.background.downloadBytesPerSecond") as? Double ?? 0
                if rate == 0 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(rate > 0, "\(stats)")
            #expect((stats.value(at: "classes.background.totalBytesReceived") as? Int ?? 0) > 0)
            #expect(stats.value(at: "classes.default.downloadBytesPerSecond") as? Double == 0)
            #expect(stats.value(at: "classes.background.running") as? Int == 1)
            #expect(try await daemon.waitForCompletion(id).isNull("error"))
            let after = try await daemon.get("/v1/stats").object()
            #expect(after.value(at: "classes.background.totalBytesReceived") as? Int == body.count)
            #expect(after.int("running") == 0)
        }
    }
}
