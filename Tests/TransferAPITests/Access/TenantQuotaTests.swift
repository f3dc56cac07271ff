import Foundation
import HTTPServer
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Per-tenant quotas (issue 16, "The API server under abuse"): unfinished tasks (429
/// `quota_exceeded`), bytes held in the data folder (507 `quota_exceeded`), the largest blob
/// (413). Past one, nothing is created, a batch is refused whole, and freeing lets new ones in.
@Suite struct TenantQuotaTests {
    static let (admin, alice, bob) = (ThreeTokens.admin, ThreeTokens.alice, ThreeTokens.bob)

    /// A suspended task: it never runs, so it stays unfinished until cancelled.
    private static var suspended: [String: Any] { ["kind": "data", "request": ["url": "http://127.0.0.1:9/"], "state": "suspended"] }

    private func taskCount(_ daemon: DaemonFixture, _ token: String) async throws -> Int {
        try #require(try await daemon.get("/v1/sessions/shared/tasks?limit=1000", token: .some(token)).object()["items"] as? [Any]).count
    }

    private func quota(_ daemon: DaemonFixture, _ token: String) async throws -> [String: Any] {
        try await daemon.get("/v1/quota", token: .some(token)).object()
    }

    @Test func theTaskQuotaRefusesTheNextTaskAndAWholeBatchUntilTasksFinish() async throws {
        try await DaemonFixture.with(configure: { ThreeTokens.configure(&$0); $0.tenantMaxTasks = 3 }, token: Self.alice) { daemon in
            var ids: [Int] = []
            for _ in 0..<2 { ids.append(try #require(try await daemon.post("/v1/sessions/shared/tasks", json: Self.suspended).object().int("id"))) }
            // Two held, two asked for: the batch is refused whole.
            let batch = try await daemon.post("/v1/sessions/shared/tasks:batch", json: ["tasks": [Self.suspended, Self.suspended]])
            #expect(batch.status == 429, "\(batch)")
            #expect(batch.errorCode == "quota_exceeded")
            #expect(try await taskCount(daemon, Self.alice) == 2)

            ids.append(try #require(try await daemon.post("/v1/sessions/shared/tasks", json: Self.suspended).object().int("id")))
            let fourth = try await daemon.post("/v1/sessions/shared/tasks", json: Self.suspended)
            #expect(fourth.status == 429 && fourth.errorCode == "quota_exceeded", "\(fourth)")
            #expect(fourth.error?.string("message")?.contains("at most 3") == true)
            #expect(try await taskCount(daemon, Self.alice) == 3)
            let held = try await quota(daemon, Self.alice)
            #expect(held.int("tasks") == 3 && held.int("maxTasks") == 3)
            #expect(held.keys.contains("maxDiskBytes") && held["maxDiskBytes"] is NSNull, "an unlimited quota is null")

            // Another tenant has its own count; the admin too.
            for token in [Self.bob, Self.admin] {
                #expect(try await daemon.post("/v1/sessions/shared/tasks", json: Self.suspended, token: .some(token)).status == 201)
            }

            // A finished task no longer counts; deleting it changes nothing more.
            #expect(try await daemon.post("/v1/tasks/\(ids[0])/cancel").status == 200)
            _ = try await daemon.waitForCompletion(ids[0])
            #expect(try await quota(daemon, Self.alice).int("tasks") == 2)
            #expect(try await daemon.request("DELETE", "/v1/tasks/\(ids[0])").status == 204)
            #expect(try await daemon.post("/v1/sessions/shared/tasks", json: Self.suspended).status == 201)
            #expect(try await daemon.post("/v1/sessions/shared/tasks", json: Self.suspended).status == 429)

            // Counted again from the store after a restart.
            daemon.stop()
            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await quota(second, Self.alice).int("tasks") == 3)
            #expect(try await second.post("/v1/sessions/shared/tasks", json: Self.suspended).status == 429)
        }
    }

    @Test func theDiskQuotaRefusesBlobsAndNewTasksUntilSpaceIsFreed() async throws {
        let origin = try OriginServer { _ in .respond(headers: ["Cache-Control": "no-store"], body: Data(repeating: 0x61, count: 700)) }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { ThreeTokens.configure(&$0); $0.tenantMaxDiskBytes = 1000; $0.maxBlobSize = 900 }, token: Self.alice) { daemon in
            func blob(_ size: Int, _ token: String = Self.alice) async throws -> APIResponse {
                try await daemon.request("POST", "/v1/blobs", body: Data(repeating: 0x62, count: size), headers: ["Content-Type": "application/octet-stream"], token: .some(token))
            }
            let blobFolder = daemon.directory.path + "/blobs"
            let first = try await blob(600)
            #expect(first.status == 201, "\(first)")
            let firstId = try #require(try first.object().string("id"))

            // 600 + 500 > 1000: refused before a byte is stored.
            let over = try await blob(500)
            #expect(over.status == 507 && over.errorCode == "quota_exceeded", "\(over)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: blobFolder) == [firstId])
            // Larger than the largest blob: 413, whoever's quota.
            #expect(try await blob(901, Self.bob).status == 413)
            // Bob's quota is his own.
            #expect(try await blob(600, Self.bob).status == 201)

            // A download's bytes count: 600 of blobs + 700 received passes 1000.
            let task = try #require(try await daemon.dataTask(["url": origin.url("/body")]).int("id"))
            _ = try await daemon.waitForCompletion(task)
            #expect(try await quota(daemon, Self.alice).int("diskBytes") == 1300)
            let refused = try await daemon.post("/v1/sessions/shared/tasks", json: Self.suspended)
            #expect(refused.status == 507 && refused.errorCode == "quota_exceeded", "\(refused)")
            #expect(try await taskCount(daemon, Self.alice) == 1)
            let refusedBatch = try await daemon.post("/v1/sessions/shared/tasks:batch", json: ["tasks": [Self.suspended]])
            #expect(refusedBatch.status == 507)
            #expect(try await taskCount(daemon, Self.alice) == 1)

            // Counted again after a restart: the blob from its row, the task from its record.
            daemon.stop()
            let second = try daemon.restarted()
            defer { second.stop() }
            #expect(try await quota(second, Self.alice).int("diskBytes") == 1300)
            #expect(try await quota(second, Self.alice).int("maxDiskBytes") == 1000)

            // Freeing the blob lets a task in; deleting the task lets a blob in.
            #expect(try await second.request("DELETE", "/v1/blobs/\(firstId)").status == 204)
            #expect(try await second.post("/v1/sessions/shared/tasks", json: Self.suspended).status == 201)
            #expect(try await second.request("DELETE", "/v1/tasks/\(task)").status == 204)
            #expect(try await quota(second, Self.alice).int("diskBytes") == 0)
            #expect(try await second.request("POST", "/v1/blobs", body: Data(count: 900), headers: ["Content-Type": "application/octet-stream"]).status == 201)
        }
    }

    /// Without a Content-Length up front (a handler without a sink), the quota is checked when
    /// the blob is committed: refused, and no file is left.
    @Test func aBlobIsCheckedAgainWhenItIsCommitted() async throws {
        try await DaemonFixture.with(configure: { $0.tenantMaxDiskBytes = 10 }) { daemon in
            let handler = APIHandler(service: daemon.daemon.service, authenticator: Authenticator(tokens: []))
            func post(_ size: Int) async throws -> HTTPResponse {
                let request = HTTPRequest(head: HTTPRequestHead(id: 1, method: "POST", path: "/v1/blobs"), body: Data(count: size))
                guard case .later(let start) = handler.route(request) else { Issue.record("answered at once"); return HTTPResponse(status: 0) }
                return try await withCheckedThrowingContinuation { continuation in
                    do { try start { continuation.resume(returning: $0) } } catch { continuation.resume(throwing: error) }
                }
            }
            let first = try await post(8)
            #expect(first.status == 201)
            #expect(try await post(3).status == 507)
            #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path + "/blobs").count == 1)
            #expect(try daemon.daemon.service.quotaUsage(owner: nil).diskBytes == 8)
        }
    }
}
