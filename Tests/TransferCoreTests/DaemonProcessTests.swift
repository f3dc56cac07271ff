import Foundation
import Glibc
import TestSupport
import Testing

/// The real `transferd` executable: crash safety under `kill -9`, a clean SIGTERM, and the CLI.
@Suite struct DaemonProcessTests {
    // MARK: HTTP helpers

    private static let json = ["Content-Type": "application/json"]

    private func object(_ response: TestHTTPResponse, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        #expect(response.status == status, "\(response)", sourceLocation: sourceLocation)
        return try response.jsonObject()
    }

    private func createTask(_ client: TestHTTPClient, session: String, url: String, state: String = "running") async throws -> (id: Int, version: Int) {
        let body = #"{"kind": "data", "state": "\#(state)", "request": {"url": "\#(url)"}}"#
        let task = try object(try await client.sendAsync("POST", "/v1/sessions/\(session)/tasks", headers: Self.json, body: Data(body.utf8)), 201)
        return (try #require(task["id"] as? Int), try #require(task["version"] as? Int))
    }

    /// Long-polls `/v1/tasks/{id}/progress` until `condition` holds for its JSON.
    @discardableResult

    private func errorCode(_ task: [String: Any]) -> Int? {
        (task["error"] as? [String: Any])?["code"] as? Int
    }

    // MARK: crash safety

    @Test func killNineLosesNothingCommittedAndSettlesWhatWasRunning() async throws {
        let bodies = (0..<3).map { _ in randomBytes(50_000) }
        let laterBody = randomBytes(30_000)
        let slowBody = randomBytes(80 * 1_024)  // about 4 s: the suspend must find it still running
        let origin = try OriginServer { request in
            if request.path == "/stall" || request.path.hasPrefix("/stall?") {
                return .stallAfterHeaders(contentLength: 1_000_000, bodyPrefix: Data(repeating: 7, count: 1_000))
            }
            if request.path == "/slow" { return .slowBody(body: slowBody, bytesPerWrite: 1_024, interval: .milliseconds(50)) }
            if request.path == "/later" { return .respond(headers: ["Content-Type": "application/x-later"], body: laterBody) }
            if request.path.hasPrefix("/ok/"), let index = Int(request.path.dropFirst(4)), bodies.indices.contains(index) {
                return .respond(headers: ["Content-Type": "application/octet-stream"], body: bodies[index])
            }
            return .respond(status: 404)
        }
        defer { origin.stop() }
        let folder = try TempDirectory(prefix: "transferd-coretests-crash")
        defer { folder.remove() }

        // First life: some tasks complete, two are mid-transfer, one waits suspended.
        let first = try await DaemonProcess.start(dataDirectory: folder.path)
        let client = TestHTTPClient(port: first.port)
        let session = try #require(try object(try await client.sendAsync("POST", "/v1/sessions", headers: Self.json, body: Data("{}".utf8)), 201)["id"] as? String)
        var completed: [Int: Data] = [:]
        for (index, body) in bodies.enumerated() {
            let task = try await createTask(client, session: session, url: origin.url("/ok/\(index)"))
            let final = try await pollTask(client, task.id, timeout: 20, wait: 5) { $0["state"] as? String == "completed" }
            #expect(errorCode(final) == nil)
            let served = try await client.sendAsync("GET", "/v1/tasks/\(task.id)/body")
            #expect(served.status == 200)
            #expect(served.body == body)
            completed[task.id] = body
        }
        var stalled: [Int] = []
        for index in 0..<2 {
            let task = try await createTask(client, session: session, url: origin.url("/stall?\(index)"))
            try await pollTask(client, task.id, timeout: 20, wait: 5) { ($0["phase"] as? String) == "transferring" && (($0["progress"] as? [String: Any])?["bytesReceived"] as? Int ?? 0) > 0 }
            stalled.append(task.id)
        }
        let suspended = try await createTask(client, session: session, url: origin.url("/later"), state: "suspended")
        // And one suspended mid-transfer: its connection dies with the process.
        let paused = try await createTask(client, session: session, url: origin.url("/slow"))
        try await pollTask(client, paused.id, timeout: 20, wait: 5) { (($0["progress"] as? [String: Any])?["bytesReceived"] as? Int ?? 0) > 0 }
        _ = try object(try await client.sendAsync("POST", "/v1/tasks/\(paused.id)/suspend", headers: Self.json, body: Data("{}".utf8)), 200)
        #expect(origin.requests.filter { $0.path.hasPrefix("/stall") }.count == 2)

        first.kill(SIGKILL)
        let killedStatus = await first.waitForExit(timeout: 10)
        #expect(killedStatus == SIGKILL)
        #expect(first.process.terminationReason == .uncaughtSignal)
        client.close()

        // Second life on the same folder.
        let second = try await DaemonProcess.start(dataDirectory: folder.path)
        let after = TestHTTPClient(port: second.port)
        let list = try object(try await after.sendAsync("GET", "/v1/sessions/\(session)/tasks?limit=100"), 200)
        let items = try #require(list["items"] as? [[String: Any]])
        #expect(items.compactMap { $0["id"] as? Int }.sorted() == (Array(completed.keys) + stalled + [suspended.id, paused.id]).sorted())

        for (id, body) in completed {
            let task = try object(try await after.sendAsync("GET", "/v1/tasks/\(id)"), 200)
            #expect(task["state"] as? String == "completed")
            #expect(task["error"] is NSNull)
            #expect((task["response"] as? [String: Any])?["statusCode"] as? Int == 200)
            let served = try await after.sendAsync("GET", "/v1/tasks/\(id)/body")
            #expect(served.status == 200)
            #expect(served.body == body, "task \(id)'s body changed across kill -9")
            #expect(served.header("Content-Type") == "application/octet-stream")
        }
        for id in stalled {
            let task = try object(try await after.sendAsync("GET", "/v1/tasks/\(id)"), 200)
            #expect(task["state"] as? String == "completed")
            #expect(errorCode(task) == -1005)
            #expect((task["error"] as? [String: Any])?["name"] as? String == "networkConnectionLost")
            #expect(try await after.sendAsync("GET", "/v1/tasks/\(id)/body").status == 409)
        }
        let waiting = try object(try await after.sendAsync("GET", "/v1/tasks/\(suspended.id)"), 200)
        #expect(waiting["state"] as? String == "suspended")
        #expect(origin.requests.filter { $0.path == "/later" }.isEmpty)
        _ = try object(try await after.sendAsync("POST", "/v1/tasks/\(suspended.id)/resume", headers: Self.json, body: Data("{}".utf8)), 200)
        let resumed = try await pollTask(after, suspended.id, timeout: 20, wait: 5) { $0["state"] as? String == "completed" }
        #expect(errorCode(resumed) == nil)
        let laterServed = try await after.sendAsync("GET", "/v1/tasks/\(suspended.id)/body")
        #expect(laterServed.body == laterBody)
        #expect(laterServed.header("Content-Type") == "application/x-later")

        // The one paused mid-transfer starts over when resumed, and arrives whole.
        let pausedTask = try object(try await after.sendAsync("GET", "/v1/tasks/\(paused.id)"), 200)
        #expect(pausedTask["state"] as? String == "suspended")
        #expect((pausedTask["progress"] as? [String: Any])?["bytesReceived"] as? Int == 0)
        _ = try object(try await after.sendAsync("POST", "/v1/tasks/\(paused.id)/resume", headers: Self.json, body: Data("{}".utf8)), 200)
        let pausedDone = try await pollTask(after, paused.id, timeout: 20, wait: 5) { $0["state"] as? String == "completed" }
        #expect(errorCode(pausedDone) == nil)
        #expect(try await after.sendAsync("GET", "/v1/tasks/\(paused.id)/body").body == slowBody)
        #expect(origin.requests.filter { $0.path == "/slow" }.count == 2)

        second.kill(SIGTERM)
        #expect(await second.waitForExit(timeout: 10) == 0)
    }

    @Test func sigtermAnswersAHeldLongPollAndExitsCleanly() async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-sigterm")
        defer { folder.remove() }
        let daemon = try await DaemonProcess.start(dataDirectory: folder.path)
        let client = TestHTTPClient(port: daemon.port)
        let session = try #require(try object(try await client.sendAsync("POST", "/v1/sessions", headers: Self.json, body: Data("{}".utf8)), 201)["id"] as? String)
        let task = try await createTask(client, session: session, url: "http://127.0.0.1:9/never", state: "suspended")

        let poller = TestHTTPClient(port: daemon.port)
        let held = Task { try await poller.sendAsync("GET", "/v1/tasks/\(task.id)/progress?after=\(task.version)&wait=30", timeout: 40) }
        // Nothing outside the daemon tells when a poll is held; give the request time to arrive
        // (a poll that arrived is answered at once by SIGTERM, so this is no race on the answer).
        try await Task.sleep(for: .seconds(1))

        let signalled = ContinuousClock.now
        daemon.kill(SIGTERM)
        let answer = try await held.value
        let answeredMilliseconds = milliseconds(since: signalled)
        #expect(answer.status == 200, "\(answer)")
        let snapshot = try answer.jsonObject()
        #expect(snapshot["taskId"] as? Int == task.id)
        #expect(snapshot["state"] as? String == "suspended")
        #expect(answeredMilliseconds < 5_000)

        let status = await daemon.waitForExit(timeout: 5)
        let stopMilliseconds = milliseconds(since: signalled)
        #expect(status == 0, "stderr:\n\(daemon.output.stderr)")
        #expect(daemon.process.terminationReason == .exit)
        #expect(stopMilliseconds < 5_000)
        #expect(daemon.output.stderr.contains("transferd stopped"))
        print(String(format: "daemon start: %.0f ms, stop: %.0f ms (SIGTERM to exit, held long-poll answered after %.0f ms)", daemon.startMilliseconds, stopMilliseconds, answeredMilliseconds))

        // The state it stopped with is intact for the next start.
        let again = try await DaemonProcess.start(dataDirectory: folder.path)
        let reloaded = try object(try await TestHTTPClient(port: again.port).sendAsync("GET", "/v1/tasks/\(task.id)"), 200)
        #expect(reloaded["state"] as? String == "suspended")
        again.kill(SIGTERM)
        #expect(await again.waitForExit(timeout: 10) == 0)
    }

    // MARK: command line

    @Test func helpListsEveryFlagAndItsEnvironmentVariable() async throws {
        let result = try await DaemonProcess.run(["--help"])
        #expect(result.status == 0 && result.exited)
        for flag in ["--listen", "--data-dir", "--downloads-dir", "--token", "--token-file", "--tenant-max-tasks", "--tenant-max-disk", "--allow-unauthenticated", "--max-transfers", "--max-body-size", "--max-request-size", "--max-blob-size", "--http-threads", "--log-level", "--retry-backoff", "--connectivity-backoff", "--deny-networks", "--allow-networks", "--max-connections", "--max-connections-per-client", "--idle-connection-timeout"] {
            #expect(result.stdout.contains(flag), "--help does not mention \(flag)")
        }
        for name in ["TRANSFERD_LISTEN", "TRANSFERD_DATA_DIR", "TRANSFERD_DOWNLOADS_DIR", "TRANSFERD_TOKENS", "TRANSFERD_ALLOW_UNAUTHENTICATED", "TRANSFERD_MAX_TRANSFERS",
                     "TRANSFERD_MAX_BODY_SIZE", "TRANSFERD_MAX_REQUEST_SIZE", "TRANSFERD_MAX_BLOB_SIZE", "TRANSFERD_HTTP_THREADS", "TRANSFERD_LOG_LEVEL", "TRANSFERD_RETRY_BACKOFF", "TRANSFERD_CONNECTIVITY_BACKOFF", "TRANSFERD_DENY_NETWORKS", "TRANSFERD_ALLOW_NETWORKS"] {
            #expect(result.stdout.contains(name), "--help does not mention \(name)")
        }
    }

    @Test func nonLoopbackWithoutTokenRefusesToStart() async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-refuse")
        defer { folder.remove() }
        let dataDirectory = folder.path + "/never-created"
        let start = ContinuousClock.now
        let result = try await DaemonProcess.run(["--listen", "0.0.0.0:0", "--data-dir", dataDirectory])
        #expect(result.exited && result.status != 0)
        #expect(result.stderr.contains("TRANSFERD_TOKENS"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("0.0.0.0"))
        #expect(seconds(since: start) < 10)
        // Refused before touching anything.
        #expect(!FileManager.default.fileExists(atPath: dataDirectory))
    }

    @Test func nonLoopbackWithATokenFromTheEnvironmentStartsAndRequiresIt() async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-token")
        defer { folder.remove() }
        let daemon = try await DaemonProcess.start(dataDirectory: folder.path, arguments: ["--listen", "0.0.0.0:0"], environment: ["TRANSFERD_TOKENS": "s3cret, other"])
        let client = TestHTTPClient(port: daemon.port)
        #expect(try await client.sendAsync("GET", "/v1/sessions").status == 401)
        #expect(try await client.sendAsync("GET", "/v1/sessions", headers: ["Authorization": "Bearer wrong"]).status == 401)
        #expect(try await client.sendAsync("GET", "/v1/sessions", headers: ["Authorization": "Bearer s3cret"]).status == 200)
        #expect(try await client.sendAsync("GET", "/v1/sessions", headers: ["Authorization": "Bearer other"]).status == 200)
        daemon.kill(SIGTERM)
        #expect(await daemon.waitForExit(timeout: 10) == 0)
    }

    /// Tokens from a file named by the environment (issue 16, item 4): enough to serve a
    /// non-loopback address, each with its role; a bad line stops the start naming its number.
    @Test func tokensFromAFileCarryTheirRolesAndABadLineRefusesToStart() async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-tokenfile")
        defer { folder.remove() }
        let file = folder.path + "/tokens"
        try Data("# the operators\nops:ops-s3cret:admin\n\nalice:alice-s3cret\n".utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        let daemon = try await DaemonProcess.start(dataDirectory: folder.path + "/data", arguments: ["--listen", "0.0.0.0:0"], environment: ["TRANSFERD_TOKENS_FILE": file])
        let client = TestHTTPClient(port: daemon.port)
        let limits = Data(#"{"downloadBytesPerSecond": 1000}"#.utf8)
        let json = ["Content-Type": "application/json"]
        #expect(try await client.sendAsync("GET", "/v1/sessions").status == 401)
        #expect(try await client.sendAsync("PATCH", "/v1/limits", headers: json.merging(["Authorization": "Bearer alice-s3cret"]) { $1 }, body: limits).status == 403)
        #expect(try await client.sendAsync("PATCH", "/v1/limits", headers: json.merging(["Authorization": "Bearer ops-s3cret"]) { $1 }, body: limits).status == 200)
        daemon.kill(SIGTERM)
        #expect(await daemon.waitForExit(timeout: 10) == 0)

        try Data("ops:ops-s3cret:admin\nalice:alice-s3cret:owner\n".utf8).write(to: URL(fileURLWithPath: file))
        let refused = try await DaemonProcess.run(["--listen", "127.0.0.1:0", "--data-dir", folder.path + "/data", "--token-file", file])
        #expect(refused.exited && refused.status != 0)
        #expect(refused.stderr.contains("\(file) line 2") && refused.stderr.contains("owner"), "stderr: \(refused.stderr)")
        #expect(!refused.stderr.contains("s3cret"), "a secret was printed: \(refused.stderr)")
    }

    @Test(arguments: [
        (["--listen", "garbage"], "garbage"),
        (["--listen", "127.0.0.1"], "--listen"),
        (["--listen", "127.0.0.1:70000"], "--listen"),
        (["--listen", "[::1"], "--listen"),
        (["--max-transfers", "0"], "TRANSFERD_MAX_TRANSFERS"),
        (["--retry-backoff", "5:1"], "TRANSFERD_RETRY_BACKOFF"),
        (["--connectivity-backoff", "soon"], "TRANSFERD_CONNECTIVITY_BACKOFF"),
        (["--log-level", "info", "--bogus-flag"], "--bogus-flag"),
        (["--log-level", "verbose"], "TRANSFERD_LOG_LEVEL"),
        (["--deny-networks", "10.0.0.0/33"], "\"10.0.0.0/33\" is not an address range"),
        (["--deny-networks", "127.0.0.2/32", "--allow-networks", "127.0.0.1,bogus"], "--allow-networks/TRANSFERD_ALLOW_NETWORKS: \"bogus\""),
    ])
    func badArgumentsFailClearly(arguments: [String], mention: String) async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-args")
        defer { folder.remove() }
        let result = try await DaemonProcess.run(arguments + ["--data-dir", folder.path + "/data"])
        #expect(result.exited && result.status != 0)
        #expect(result.stderr.contains(mention), "stderr: \(result.stderr)")
        #expect(result.stderr.lowercased().contains("error"))
    }

    @Test func badEnvironmentFailsClearly() async throws {
        let result = try await DaemonProcess.run(["--listen", "127.0.0.1:0", "--data-dir", "/nonexistent-never"], environment: ["TRANSFERD_MAX_TRANSFERS": "many"])
        #expect(result.exited && result.status != 0)
        #expect(result.stderr.contains("TRANSFERD_MAX_TRANSFERS"), "stderr: \(result.stderr)")
        let ranges = try await DaemonProcess.run(["--listen", "127.0.0.1:0", "--data-dir", "/nonexistent-never"], environment: ["TRANSFERD_DENY_NETWORKS": "169.254/16"])
        #expect(ranges.exited && ranges.status != 0)
        #expect(ranges.stderr.contains("TRANSFERD_DENY_NETWORKS") && ranges.stderr.contains("169.254/16"), "stderr: \(ranges.stderr)")
    }

    /// Listening beyond loopback, the daemon refuses its own host (and private networks) by
    /// default: a task to an origin on 127.0.0.1 ends with the policy's error and the origin
    /// sees nothing; TRANSFERD_ALLOW_NETWORKS opens it again.
    @Test func aNonLoopbackListenerRefusesLoopbackByDefaultUnlessAllowed() async throws {
        let origin = try OriginServer { _ in .text("inside") }
        defer { origin.stop() }
        for (environment, refused) in [([String: String](), true), (["TRANSFERD_ALLOW_NETWORKS": "127.0.0.1/32"], false)] {
            let folder = try TempDirectory(prefix: "transferd-coretests-policy")
            defer { folder.remove() }
            let daemon = try await DaemonProcess.start(dataDirectory: folder.path, arguments: ["--listen", "0.0.0.0:0", "--allow-unauthenticated"], environment: environment)
            let client = TestHTTPClient(port: daemon.port)
            let body = #"{"kind": "data", "request": {"url": "\#(origin.url("/x"))"}}"#
            let id = try #require(try object(try await client.sendAsync("POST", "/v1/sessions/shared/tasks", headers: Self.json, body: Data(body.utf8)), 201)["id"] as? Int)
            try await pollTask(client, id, timeout: 15) { $0["state"] as? String == "completed" }
            let task = try object(try await client.sendAsync("GET", "/v1/tasks/\(id)"), 200)
            let error = task["error"] as? [String: Any]
            if refused {
                #expect(error?["reason"] as? String == "network_policy" && errorCode(task) == -1004, "\(task)")
                #expect((error?["message"] as? String)?.contains("127.0.0.0/8 is refused by default") == true, "\(task)")
                #expect(origin.connectionCount == 0)
            } else {
                #expect(error == nil, "\(task)")
                #expect(origin.requests.count == 1)
            }
            daemon.kill(SIGTERM)
            #expect(await daemon.waitForExit(timeout: 10) == 0)
        }
    }

    @Test func aPortInUseFailsInsteadOfHanging() async throws {
        let occupied = try OriginServer { _ in .closeWithoutResponse }
        defer { occupied.stop() }
        let folder = try TempDirectory(prefix: "transferd-coretests-busy")
        defer { folder.remove() }
        let result = try await DaemonProcess.run(["--listen", "127.0.0.1:\(occupied.port)", "--data-dir", folder.path], timeout: 15)
        #expect(result.exited && result.status != 0)
        #expect(result.stderr.contains(String(occupied.port)), "stderr: \(result.stderr)")
    }
}
