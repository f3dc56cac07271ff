import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService
import BuildInfo

/// `GET /metrics`: Prometheus' text format, behind the token, and figures that move as tasks
/// queue, run, complete and move bytes; labels are bounded (route patterns, never raw paths).
@Suite struct MetricsTests {
    private static let token = "metrics-token"
    private static func configure(_ configuration: inout DaemonConfiguration) { configuration.tokens = [token] }

    private func scrape(_ daemon: DaemonFixture, sourceLocation: SourceLocation = #_sourceLocation) async throws -> PrometheusText {
        let response = try await daemon.get("/metrics")
        try #require(response.status == 200, "GET /metrics: \(response)", sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8", sourceLocation: sourceLocation)
        return try PrometheusText(response.text)
    }

    @Test func metricsNeedTheTokenAndRenderEveryFamilyWithItsType() async throws {
        try await DaemonFixture.with(configure: Self.configure, token: Self.token) { daemon in
            let refused = try await daemon.get("/metrics", token: .some(nil))
            #expect(refused.status == 401 && refused.errorCode == "unauthorized")
            #expect(try await daemon.get("/metrics", token: "wrong").status == 401)
            let metrics = try await scrape(daemon)
            let expected: [String: String] = [
                "transferd_queue_depth": "gauge", "transferd_transfers_running": "gauge", "transferd_long_polls_held": "gauge", "transferd_cluster_nodes": "gauge",
                "transferd_received_bytes_total": "counter", "transferd_sent_bytes_total": "counter",
                "transferd_admission_wait_seconds": "histogram", "transferd_store_commit_duration_seconds": "histogram",
            ]
            for (name, type) in expected { #expect(metrics.types[name] == type, "\(name)") }
            #expect(metrics.value("transferd_cluster_nodes") == 1, "a daemon on SQLite is a cluster of one")
            for schedulingClass in ["interactive", "streaming", "default", "background"] {
                #expect(metrics.value("transferd_queue_depth", ["class": schedulingClass]) == 0)
                #expect(metrics.value("transferd_received_bytes_total", ["class": schedulingClass]) == 0)
            }
            #expect(metrics.samples.allSatisfy { $0.name.hasPrefix("transferd_") || $0.name.hasPrefix("process_") })
        }
    }

    @Test func buildProcessFailureAndWebhookFigures() async throws {
        let refusing = try RefusingPort()
        defer { refusing.close() }
        try await DaemonFixture.with(configure: Self.configure, token: Self.token) { daemon in
            let before = try await scrape(daemon)
            let build = try #require(before.samples.first { $0.name == "transferd_build_info" })
            #expect(build.value == 1 && build.labels["version"] == BuildInfo.version && build.labels["commit"] == BuildInfo.commit)
            #expect(before.types["process_cpu_seconds_total"] == "counter")
            for gauge in ["process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds", "process_max_fds", "process_threads", "process_start_time_seconds"] {
                #expect(before.types[gauge] == "gauge", "\(gauge)")
                #expect(before.value(gauge) ?? 0 > 0, "\(gauge)")
            }
            #expect(before.value("process_resident_memory_bytes") ?? 0 > Double(4 << 20))
            #expect(before.value("process_threads") ?? 0 >= 4, "the engine, the store writer and the HTTP threads at least")
            let started = try #require(before.value("process_start_time_seconds"))
            #expect(abs(started - Date().timeIntervalSince1970) < 3600)
            for result in ["delivered", "failed", "given_up"] {
                #expect(before.value("transferd_webhook_deliveries_total", ["result": result]) == 0, "made at zero")
            }
            #expect(before.value("transferd_task_failures_total", ["code": "-1004"]) == nil)

            for _ in 0..<2 {
                let id = try #require(try await daemon.dataTask(["url": refusing.url("/x")]).int("id"))
                _ = try await daemon.waitForCompletion(id)
            }
            let after = try await scrape(daemon)
            #expect(after.value("transferd_task_failures_total", ["code": "-1004"]) == 2)
            #expect(after.value("process_cpu_seconds_total") ?? 0 >= before.value("process_cpu_seconds_total") ?? 0)
        }
    }

    @Test func figuresMoveAsTasksQueueRunAndComplete() async throws {
        let body = Data(repeating: 7, count: 300_000)
        let origin = try OriginServer { request in
            request.path == "/stall" ? .stallAfterHeaders(contentLength: 10) : .respond(body: body)
        }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: { Self.configure(&$0); $0.service.maxConcurrentTransfers = 1 }, token: Self.token) { daemon in
            let before = try await scrape(daemon)
            let commitsBefore = before.value("transferd_store_commit_duration_seconds_count") ?? 0
            let blocker = try #require(try await daemon.dataTask(["url": origin.url("/stall")]).int("id"))
            try await daemon.waitForTask(blocker) { $0.string("phase") == "transferring" }
            let queued = try #require(try await daemon.dataTask(["url": origin.url("/body")]).int("id"))

            // A progress long-poll held by another client shows in the gauge while it waits.
            let poller = daemon.newClient()
            let task = try await daemon.task(queued)
            let version = try #require(task.int("version"))
            let held = Task { try await daemon.request("GET", "/v1/tasks/\(queued)/progress?after=\(version)&wait=20", client: poller, timeout: 30) }
            var waiting = try await scrape(daemon)
            for _ in 0..<100 where waiting.value("transferd_long_polls_held") != 1 {
                try await Task.sleep(for: .milliseconds(20))
                waiting = try await scrape(daemon)
            }
            #expect(waiting.value("transferd_long_polls_held") == 1)
            #expect(waiting.value("transferd_queue_depth", ["class": "default"]) == 1)
            #expect(waiting.value("transferd_transfers_running", ["class": "default"]) == 1)
            #expect(waiting.value("transferd_tasks", ["state": "running", "phase": "queued", "kind": "data", "class": "default"]) == 1)
            #expect(waiting.value("transferd_tasks", ["state": "running", "phase": "transferring", "kind": "data", "class": "default"]) == 1)
            #expect(waiting.value("transferd_admission_wait_seconds_count", ["class": "default"]) == 1)

            #expect(try await daemon.post("/v1/tasks/\(blocker)/cancel").status == 200)
            #expect(try await daemon.waitForCompletion(queued).isNull("error"))
            _ = try await held.value
            let after = try await scrape(daemon)
            #expect(after.value("transferd_long_polls_held") == 0)
            #expect(after.value("transferd_queue_depth", ["class": "default"]) == 0)
            #expect(after.value("transferd_tasks", ["state": "running"]) == 0, "a series no task has any more goes back to 0")
            #expect(after.value("transferd_tasks", ["state": "completed", "phase": "done", "kind": "data", "class": "default"]) == 2)
            #expect(after.value("transferd_tasks_completed_total", ["kind": "data", "class": "default", "result": "succeeded"]) == 1)
            #expect(after.value("transferd_tasks_completed_total", ["kind": "data", "class": "default", "result": "cancelled"]) == 1)
            #expect(after.value("transferd_received_bytes_total", ["class": "default"]) ?? 0 >= Double(body.count))
            #expect(after.value("transferd_admission_wait_seconds_count", ["class": "default"]) == 2)
            #expect(after.value("transferd_admission_wait_seconds_sum", ["class": "default"]) ?? 0 > 0, "the second task waited for the first")
            #expect(after.value("transferd_store_commit_duration_seconds_count") ?? 0 > commitsBefore)
            let creates = ["method": "POST", "route": "/v1/sessions/{sid}/tasks", "status": "201"]
            #expect(after.value("transferd_http_request_duration_seconds_count", creates) == 2)
            #expect(after.value("transferd_http_request_duration_seconds_count", ["method": "GET", "route": "/v1/tasks/{tid}/progress", "status": "200"]) ?? 0 >= 1)
        }
    }

    @Test func routesAreLabelledByPatternAndUnknownPathsShareOneLabel() async throws {
        try await DaemonFixture.with(configure: Self.configure, token: Self.token) { daemon in
            for id in [11, 12, 13] { #expect(try await daemon.get("/v1/tasks/\(id)").status == 404) }
            for path in ["/nope/1", "/nope/2", "/v1/what/ever"] { #expect(try await daemon.get(path).status == 404) }
            #expect(try await daemon.request("BREW", "/v1/tasks/1").status == 405)
            let metrics = try await scrape(daemon)
            let latency = metrics.samples.filter { $0.name == "transferd_http_request_duration_seconds_count" }
            #expect(metrics.value("transferd_http_request_duration_seconds_count", ["method": "GET", "route": "/v1/tasks/{tid}", "status": "404"]) == 3)
            #expect(metrics.value("transferd_http_request_duration_seconds_count", ["method": "GET", "route": "unmatched", "status": "404"]) == 3)
            #expect(metrics.value("transferd_http_request_duration_seconds_count", ["method": "other", "route": "/v1/tasks/{tid}", "status": "405"]) == 1)
            // No label carries a raw path or an unknown method.
            let routes = Set(latency.compactMap { $0.labels["route"] })
            #expect(routes.allSatisfy { route in route.split(separator: "/").allSatisfy { Int($0) == nil } }, "\(routes)")
            #expect(routes.allSatisfy { $0 == "unmatched" || $0.hasPrefix("/") } && !routes.contains { $0.contains("nope") || $0.contains("what") })
            #expect(Set(latency.compactMap { $0.labels["method"] }).isSubset(of: ["GET", "POST", "other"]))
        }
    }

    @Test func twoDaemonsInOneProcessCountApart() async throws {
        try await DaemonFixture.with { first in
            for _ in 0..<3 { #expect(try await first.get("/healthz").status == 200) }
            let directory = try TempDirectory(prefix: "transferd-apitest-second")
            defer { directory.remove() }
            let second = try TransferDaemon(configuration: DaemonFixture.baseConfiguration(directory), logger: DaemonFixture.logger)
            try second.start()
            defer { second.stop() }
            let client = TestHTTPClient(port: second.port)
            let text = try await client.sendAsync("GET", "/metrics").text
            let metrics = try PrometheusText(text)
            #expect(metrics.value("transferd_http_request_duration_seconds_count", ["route": "/healthz"]) == nil)
            let own = try PrometheusText(try await first.get("/metrics").text)
            #expect(own.value("transferd_http_request_duration_seconds_count", ["route": "/healthz"]) == 3)
        }
    }
}
