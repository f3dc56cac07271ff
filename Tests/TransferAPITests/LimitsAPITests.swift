import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// GET/PATCH /v1/limits and a task's `bandwidthLimit` over real HTTP: shapes, merge rules and
/// validation (the rates themselves are measured in TransferCoreTests' BandwidthLimitTests).
struct LimitsAPITests {
    @Test func limitsStartFromTheConfigurationAndPatchMerges() async throws {
        try await DaemonFixture.with(configure: { $0.service.bandwidthLimits.downloadBytesPerSecond = 5_000_000 }) { daemon in
            let initial = try await daemon.get("/v1/limits")
            #expect(initial.status == 200)
            let limits = try initial.object()
            #expect(limits.int("downloadBytesPerSecond") == 5_000_000)
            #expect(limits.isNull("uploadBytesPerSecond"))
            #expect(limits.object("background")?.isNull("downloadBytesPerSecond") == true)
            #expect(limits.object("background")?.isNull("uploadBytesPerSecond") == true)

            // Fields left out stay; null makes a direction unlimited.
            var response = try await daemon.patch("/v1/limits", json: ["uploadBytesPerSecond": 1000, "background": ["downloadBytesPerSecond": 250_000]])
            #expect(response.status == 200, "\(response)")
            var patched = try response.object()
            #expect(patched.int("downloadBytesPerSecond") == 5_000_000)
            #expect(patched.int("uploadBytesPerSecond") == 1000)
            #expect(patched.object("background")?.int("downloadBytesPerSecond") == 250_000)

            response = try await daemon.patch("/v1/limits", json: ["downloadBytesPerSecond": NSNull(), "background": ["uploadBytesPerSecond": 1_000_000_000_000]])
            patched = try response.object()
            #expect(patched.isNull("downloadBytesPerSecond"))
            #expect(patched.int("uploadBytesPerSecond") == 1000)
            #expect(patched.object("background")?.int("downloadBytesPerSecond") == 250_000)
            #expect(patched.object("background")?.int("uploadBytesPerSecond") == 1_000_000_000_000)

            response = try await daemon.patch("/v1/limits", json: ["background": NSNull()])
            patched = try response.object()
            #expect(patched.object("background")?.isNull("downloadBytesPerSecond") == true)
            #expect(patched.int("uploadBytesPerSecond") == 1000)
            let fetched = try await daemon.get("/v1/limits").object()
            #expect(NSDictionary(dictionary: fetched) == NSDictionary(dictionary: patched))
        }
    }

    /// A change over the API outlives a restart; a restart whose configured limits changed
    /// since starts from the configuration instead.
    @Test func changedLimitsAreKeptAcrossARestartUntilTheConfigurationChanges() async throws {
        try await DaemonFixture.with(configure: { $0.service.bandwidthLimits.downloadBytesPerSecond = 5_000_000 }) { daemon in
            let response = try await daemon.patch("/v1/limits", json: ["downloadBytesPerSecond": 123_456, "background": ["uploadBytesPerSecond": 7_000]])
            #expect(response.status == 200, "\(response)")
            daemon.stop()
            let again = try daemon.restarted()
            defer { again.stop() }
            let kept = try await again.get("/v1/limits").object()
            #expect(kept.int("downloadBytesPerSecond") == 123_456)
            #expect(kept.object("background")?.int("uploadBytesPerSecond") == 7_000)
            again.stop()

            var reconfigured = daemon.configuration
            reconfigured.service.bandwidthLimits.downloadBytesPerSecond = 9_000_000
            let third = try daemon.restarted(reconfigured)
            defer { third.stop() }
            let configured = try await third.get("/v1/limits").object()
            #expect(configured.int("downloadBytesPerSecond") == 9_000_000, "the operator's new configuration wins")
            #expect(configured.object("background")?.isNull("uploadBytesPerSecond") == true)
        }
    }

    static let badLimits: [(String, String, String)] = [
        (#"{"downloadBytesPerSecond": 0}"#, "invalid_rate", "downloadBytesPerSecond"),
        (#"{"downloadBytesPerSecond": -5}"#, "invalid_rate", "downloadBytesPerSecond"),
        (#"{"uploadBytesPerSecond": 1.5}"#, "invalid_rate", "uploadBytesPerSecond"),
        (#"{"uploadBytesPerSecond": 1000000000001}"#, "invalid_rate", "uploadBytesPerSecond"),
        (#"{"background": {"downloadBytesPerSecond": 0}}"#, "invalid_rate", "background.downloadBytesPerSecond"),
        (#"{"downloadBytesPerSecond": "fast"}"#, "invalid_type", "downloadBytesPerSecond"),
        (#"{"background": 5}"#, "invalid_type", "background"),
        (#"{"downloadRate": 5}"#, "unknown_field", "downloadRate"),
        (#"{"background": {"download": 5}}"#, "unknown_field", "background.download"),
    ]

    @Test func badLimitsAreRefusedWithTheField() async throws {
        try await DaemonFixture.with { daemon in
            for (body, code, field) in Self.badLimits {
                let response = try await daemon.request("PATCH", "/v1/limits", body: Data(body.utf8), headers: ["Content-Type": "application/json"])
                #expect(response.status == 400, "\(body): \(response)")
                #expect(response.errorCode == code, "\(body): \(response)")
                #expect(response.error?.string("field") == field, "\(body): \(response)")
            }
            // Nothing changed.
            let limits = try await daemon.get("/v1/limits").object()
            #expect(limits.isNull("downloadBytesPerSecond"))
            #expect(limits.isNull("uploadBytesPerSecond"))
        }
    }

    @Test func taskBandwidthLimitIsStoredShownAndPatched() async throws {
        try await DaemonFixture.with { daemon in
            let created = try await daemon.dataTask(["url": "http://127.0.0.1:9/"], extra: ["state": "suspended", "bandwidthLimit": ["downloadBytesPerSecond": 65536]])
            let id = try #require(created.int("id"))
            #expect(created.object("bandwidthLimit")?.int("downloadBytesPerSecond") == 65536)
            #expect(created.object("bandwidthLimit")?.isNull("uploadBytesPerSecond") == true)

            var response = try await daemon.patch("/v1/tasks/\(id)", json: ["bandwidthLimit": ["uploadBytesPerSecond": 1024]])
            #expect(response.status == 200, "\(response)")
            var task = try response.object()
            #expect(task.object("bandwidthLimit")?.int("downloadBytesPerSecond") == 65536)
            #expect(task.object("bandwidthLimit")?.int("uploadBytesPerSecond") == 1024)
            #expect(try await daemon.task(id).object("bandwidthLimit")?.int("uploadBytesPerSecond") == 1024)

            response = try await daemon.patch("/v1/tasks/\(id)", json: ["bandwidthLimit": NSNull()])
            task = try response.object()
            #expect(task.isNull("bandwidthLimit"))

            for (body, code, field) in [
                (#"{"bandwidthLimit": {"downloadBytesPerSecond": 0}}"#, "invalid_rate", "bandwidthLimit.downloadBytesPerSecond"),
                (#"{"bandwidthLimit": {"up": 1}}"#, "unknown_field", "bandwidthLimit.up"),
            ] {
                let bad = try await daemon.request("PATCH", "/v1/tasks/\(id)", body: Data(body.utf8), headers: ["Content-Type": "application/json"])
                #expect(bad.status == 400, "\(body): \(bad)")
                #expect(bad.errorCode == code, "\(body): \(bad)")
                #expect(bad.error?.string("field") == field, "\(body): \(bad)")
            }
            let refused = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": "http://127.0.0.1:9/"], "bandwidthLimit": ["uploadBytesPerSecond": 2e12]])
            #expect(refused.status == 400, "\(refused)")
            #expect(refused.errorCode == "invalid_rate")
            #expect(refused.error?.string("field") == "bandwidthLimit.uploadBytesPerSecond")
        }
    }

    @Test func theContractDescribesLimits() async throws {
        try await DaemonFixture.with { daemon in
            let document = try await daemon.get("/openapi.yaml").text
            #expect(document.contains("/v1/limits:"))
            #expect(document.contains("BandwidthLimit:"))
            #expect(document.contains("bandwidthLimit:"))
        }
    }
}
