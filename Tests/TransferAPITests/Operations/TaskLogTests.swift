import Foundation
import Synchronization
import Testing
import TestSupport
import TransferAPI
import TransferService

/// What an operator reads: a line per task step (created, started, retried, completed, failed
/// with its code, cancelled) with numbers for bytes and durations, health probes only at debug,
/// and a held long-poll's wait shown apart from its latency.
@Suite struct TaskLogTests {
    @Test func everyStepOfATaskIsOneLineWithNumbers() async throws {
        let body = Data(repeating: 3, count: 5_000)
        let busyAnswers = Mutex(0)
        let origin = try OriginServer { request in
            switch request.path {
            case "/busy":
                let first = busyAnswers.withLock { count in
                    defer { count += 1 }
                    return count == 0
                }
                return first ? .text("busy", status: 503, headers: ["Retry-After": "0"]) : .text("done")
            case "/stall": return .stallAfterHeaders(contentLength: 10)
            default: return .respond(body: body)
            }
        }
        defer { origin.stop() }
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let captured = CapturedLines()
        try await DaemonFixture.with(configure: { $0.service.retryBackoff = Backoff(base: 0.05, cap: 0.1) }, logger: captured.logger()) { daemon in
            let ok = try #require(try await daemon.dataTask(["url": origin.url("/file")]).int("id"))
            _ = try await daemon.waitForCompletion(ok)
            let failed = try #require(try await daemon.dataTask(["url": refusing.url("/none")]).int("id"))
            _ = try await daemon.waitForCompletion(failed)
            let stalled = try #require(try await daemon.dataTask(["url": origin.url("/stall")]).int("id"))
            try await daemon.waitForTask(stalled) { $0.string("phase") == "transferring" }
            #expect(try await daemon.post("/v1/tasks/\(stalled)/cancel").status == 200)
            _ = try await daemon.waitForCompletion(stalled)
            let background = try #require(try await daemon.createSession(["kind": "background", "identifier": "log-retry"]).string("id"))
            let retried = try #require(try await daemon.dataTask(in: background, ["url": origin.url("/busy")]).int("id"))
            _ = try await daemon.waitForCompletion(retried)
            let batch = try await daemon.post("/v1/sessions/shared/tasks:batch", json: ["tasks": [
                ["kind": "data", "request": ["url": origin.url("/a")], "state": "suspended"],
                ["kind": "data", "request": ["url": origin.url("/b")], "state": "suspended"],
            ]])
            #expect(batch.status == 201)
            #expect(try await daemon.get("/healthz").status == 200)
            // An unsupported scheme's error message quotes its URL, query and all.
            let unsupported = try #require(try await daemon.dataTask(["url": "gopher://127.0.0.1/x?key=query-SECRET-9"]).int("id"))
            #expect(try await daemon.waitForCompletion(unsupported).object("error")?.string("message")?.contains("query-SECRET-9") == true)

            func line(_ message: String, task: Int) -> [String: String]? {
                captured.lines(message).first { $0["transfer.task.id"] == String(task) }
            }
            let host = "127.0.0.1:\(origin.port)"
            let created = try #require(line("task created", task: ok))
            #expect(created["transfer.session.id"] == "shared" && created["transfer.kind"] == "data" && created["url.host"] == host)
            let started = try #require(line("task started", task: ok))
            #expect(started["transfer.attempt"] == "1" && Double(started["transfer.queued"] ?? "") != nil)
            let completed = try #require(line("task completed", task: ok))
            #expect(completed["transfer.bytes_received"] == "5000" && completed["http.status"] == "200")
            #expect(Double(completed["transfer.duration"] ?? "").map { $0 >= 0 && $0 < 30 } == true, "\(completed)")
            #expect(Double(completed["transfer.run_duration"] ?? "") != nil)

            let failure = try #require(line("task failed", task: failed))
            #expect(failure["error.code"] == "-1004" && failure["error.name"] == "cannotConnectToHost", "\(failure)")
            #expect(failure["error.message"] == nil, "a message may quote the URL")
            #expect(failure["url.host"] == "127.0.0.1:\(refusing.port)")
            #expect(line("task completed", task: failed) == nil)
            #expect(line("task cancelled", task: stalled) != nil)

            let retry = try #require(line("task retried", task: retried))
            #expect(retry["retry.reason"] == "http_503" && retry["transfer.attempt"] == "2" && Double(retry["retry.delay"] ?? "") != nil)
            #expect(captured.lines("task started").filter { $0["transfer.task.id"] == String(retried) }.map { $0["transfer.attempt"] } == ["1", "2"])

            let batchLine = try #require(captured.lines("tasks created").first)
            #expect(batchLine["transfer.tasks"] == "2" && batchLine["transfer.session.id"] == "shared")
            #expect(Int(batchLine["transfer.task.last"] ?? "") == Int(batchLine["transfer.task.first"] ?? "").map { $0 + 1 })

            let requests = captured.lines("request")
            #expect(!requests.isEmpty && requests.allSatisfy { $0["http.route"] != "/healthz" }, "probes log at debug")
            #expect(requests.allSatisfy { Double($0["http.duration"] ?? "") != nil })
            // No line carries a URL's path or query: the host only.
            #expect(line("task failed", task: unsupported) != nil)
            #expect(!captured.all.contains { $0.contains("/none") || $0.contains("/busy") || $0.contains("query-SECRET-9") })
        }
    }

    @Test func aHeldLongPollLogsItsWaitApartAndLeavesItOutOfTheLatency() async throws {
        let captured = CapturedLines()
        try await DaemonFixture.with(logger: captured.logger()) { daemon in
            let id = try #require(try await daemon.dataTask(["url": "http://127.0.0.1:9/x"], extra: ["state": "suspended"]).int("id"))
            let version = try #require(try await daemon.task(id).int("version"))
            let poll = try await daemon.get("/v1/tasks/\(id)/progress?after=\(version)&wait=1.5")
            #expect(poll.status == 200)
            let line = try #require(captured.lines("request").first { $0["http.route"] == "/v1/tasks/{tid}/progress" })
            let duration = try #require(Double(line["http.duration"] ?? ""))
            let held = try #require(Double(line["http.held"] ?? ""))
            #expect(duration >= 1.4 && held >= 1.4 && held <= duration, "\(line)")
            let metrics = try PrometheusText(try await daemon.get("/metrics").text)
            let route = ["method": "GET", "route": "/v1/tasks/{tid}/progress", "status": "200"]
            #expect(metrics.value("transferd_http_request_duration_seconds_count", route) == 1)
            #expect(try #require(metrics.value("transferd_http_request_duration_seconds_sum", route)) < 1.0, "the held 1.5 s is not latency")
        }
    }
}
