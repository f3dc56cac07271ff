import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Bearer tokens: refused without one, and each token sees only what it created.
@Suite struct AuthTests {
    static let alpha = "token-alpha-0123456789"
    static let beta = "token-beta-9876543210"

    static func configure(_ configuration: inout DaemonConfiguration) {
        configuration.tokens = [alpha, beta]
    }

    /// Authorization header values that must all be refused (nil: no header).
    static let refused: [String?] = [
        nil, "Bearer wrong-token", "Bearer", "Bearer ", "Basic dG9rZW4tYWxwaGE6eA==", alpha, "Token \(alpha)",
        "Bearer \(alpha)x", "Bearer \(alpha.dropLast())",
    ]

    @Test(arguments: refused)
    func missingOrWrongTokenIsUnauthorized(authorization: String?) async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let requests: [(String, String, Any?)] = [
                ("GET", "/v1/sessions", nil),
                ("POST", "/v1/sessions", ["description": "x"]),
                ("GET", "/v1/sessions/shared", nil),
                ("POST", "/v1/sessions/shared/tasks", ["kind": "data", "request": ["url": "http://127.0.0.1:9/"]]),
                ("GET", "/v1/tasks/1/progress?wait=10", nil),
                ("GET", "/v1/nothing", nil),
            ]
            for (method, path, json) in requests {
                var headers: [String: String] = [:]
                if let authorization { headers["Authorization"] = authorization }
                let response = try await daemon.request(method, path, json: json, headers: headers, token: .some(nil))
                #expect(response.status == 401, "\(method) \(path) with \(authorization ?? "no header"): \(response)")
                #expect(response.header("WWW-Authenticate") == "Bearer")
                #expect(response.errorCode == "unauthorized")
                #expect(response.header("Content-Type") == "application/json")
            }
            // Nothing was created by the refused requests.
            let list = try await daemon.get("/v1/sessions", token: .some(Self.alpha)).object()
            #expect((list["items"] as? [[String: Any]])?.compactMap { $0.string("id") } == ["shared"])
        }
    }

    @Test func validTokenIsAcceptedWithAnyCaseOfTheScheme() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            for header in ["Bearer \(Self.alpha)", "bearer \(Self.alpha)", "BEARER \(Self.beta)"] {
                let response = try await daemon.request("GET", "/v1/sessions", headers: ["Authorization": header], token: .some(nil))
                #expect(response.status == 200, "\(header): \(response)")
            }
        }
    }

    @Test func operationsNeedNoToken() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let health = try await daemon.get("/healthz", token: .some(nil))
            #expect(health.status == 200)
            #expect(try health.object().string("status") == "ok")
            let ready = try await daemon.get("/readyz", token: .some(nil))
            #expect(ready.status == 200)
            #expect(try ready.object().string("status") == "ready")
            let contract = try await daemon.get("/openapi.yaml", token: .some(nil))
            #expect(contract.status == 200)
            #expect(contract.text.hasPrefix("openapi: 3.1.0"))
            #expect(contract.header("Content-Type") == "application/yaml")
        }
    }

    /// A large body sent without a token is refused before it is read.
    @Test func unauthenticatedBodyIsRefusedEarly() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            // Below the daemon's 16 MiB body limit: only the missing token refuses it.
            let body = Data(repeating: UInt8(ascii: "x"), count: 8 << 20)
            let head = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
            let port = daemon.port
            let answer = try await onThread { try TestHTTPClient.raw(port: port, bytes: Data(head.utf8) + body, timeout: 10) }
            let text = String(decoding: answer, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 401"), "\(text.prefix(200))")
            #expect(text.lowercased().contains("www-authenticate: bearer"))
            #expect(try await daemon.get("/healthz").status == 200)
        }
    }

    /// A held poll on the shared feed is not answered by another token's events, only by its own.
    @Test func sharedFeedPollWaitsThroughOtherTokensEvents() async throws {
        try await DaemonFixture.with(configure: Self.configure, token: Self.alpha) { daemon in
            let a: String?? = .some(Self.alpha), b: String?? = .some(Self.beta)
            _ = try await daemon.createTask(in: "shared", ["kind": "data", "request": ["url": "gopher://127.0.0.1/alpha-0"]])
            let start = try await daemon.request("GET", "/v1/sessions/shared/events", token: b).object()
            #expect((start["events"] as? [Any])?.isEmpty == true)
            let cursor = try #require(start.int("next"))

            let pollClient = daemon.newClient()
            let started = ContinuousClock.now
            async let held = daemon.request("GET", "/v1/sessions/shared/events?after=\(cursor)&wait=8", token: b, client: pollClient)
            try await waitUntilHeld(daemon, count: 1)
            let alphaTask = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": "gopher://127.0.0.1/alpha-1"]], token: a)
            #expect(alphaTask.status == 201)
            try await waitUntilHeld(daemon, count: 1)
            let betaTask = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": "gopher://127.0.0.1/beta"]], token: b)
            let betaId = try #require(try betaTask.object().int("id"))

            let page = try await held.object()
            #expect(seconds(since: started) < 6)
            let events = try #require(page["events"] as? [[String: Any]])
            // Beta's task's metrics and completion, recorded together: one answer carries both.
            #expect(events.compactMap { $0.int("taskId") } == [betaId, betaId], "\(events)")
            #expect(events.compactMap { $0.string("type") } == ["didFinishCollectingMetrics", "didCompleteWithError"], "\(events)")
            #expect(page.int("next") == events.last?.int("seq"))
        }
    }

    @Test func tokensSeeOnlyTheirOwnSessionsAndTasks() async throws {
        let origin = try OriginServer { request in .text("body of \(request.path)") }
        defer { origin.stop() }
        try await DaemonFixture.with(configure: Self.configure, token: Self.alpha) { daemon in
            let a: String?? = .some(Self.alpha), b: String?? = .some(Self.beta)
            // Alpha's things.
            let session = try #require(try await daemon.createSession(["description": "alpha's"]).string("id"))
            let background = try await daemon.post("/v1/sessions", json: ["kind": "background", "identifier": "com.example.same"], token: a)
            #expect(background.status == 201)
            let backgroundId = try #require(try background.object().string("id"))
            let done = try #require(try await daemon.dataTask(in: session, ["url": origin.url("/alpha")]).int("id"))
            _ = try await daemon.waitForCompletion(done)
            let held = try #require(try await daemon.dataTask(in: session, ["url": origin.url("/held")], extra: ["state": "suspended"]).int("id"))
            let inShared = try #require(try await daemon.dataTask(in: "shared", ["url": origin.url("/alpha-shared")]).int("id"))
            _ = try await daemon.waitForCompletion(inShared)

            // Beta's background session with the same identifier is its own, not a reattach.
            let betaBackground = try await daemon.post("/v1/sessions", json: ["kind": "background", "identifier": "com.example.same"], token: b)
            #expect(betaBackground.status == 201, "\(betaBackground)")
            #expect(try betaBackground.object().string("id") != backgroundId)
            let betaTask = try await daemon.post("/v1/sessions/shared/tasks", json: ["kind": "data", "request": ["url": origin.url("/beta")]], token: b)
            #expect(betaTask.status == 201)
            let betaTaskId = try #require(try betaTask.object().int("id"))

            // Everything of alpha's is 404 for beta.
            let hidden: [(String, String, Any?)] = [
                ("GET", "/v1/sessions/\(session)", nil),
                ("GET", "/v1/sessions/\(backgroundId)", nil),
                ("GET", "/v1/sessions/\(session)/tasks", nil),
                ("GET", "/v1/sessions/\(session)/events", nil),
                ("GET", "/v1/sessions/\(session)/events?wait=5", nil),
                ("POST", "/v1/sessions/\(session)/tasks", ["kind": "data", "request": ["url": origin.url("/sneaky")]]),
                ("POST", "/v1/sessions/\(session)/invalidate", ["cancelTasks": true]),
                ("GET", "/v1/tasks/\(done)", nil),
                ("GET", "/v1/tasks/\(done)/body", nil),
                ("GET", "/v1/tasks/\(done)/progress", nil),
                ("GET", "/v1/tasks/\(held)/progress?after=100&wait=5", nil),
                ("PATCH", "/v1/tasks/\(held)", ["description": "mine now"]),
                ("POST", "/v1/tasks/\(held)/resume", nil),
                ("POST", "/v1/tasks/\(held)/suspend", nil),
                ("POST", "/v1/tasks/\(held)/cancel", nil),
                ("GET", "/v1/tasks/\(inShared)", nil),
                ("GET", "/v1/tasks/\(inShared)/body", nil),
            ]
            for (method, path, json) in hidden {
                let response = try await daemon.request(method, path, json: json, token: b)
                #expect(response.status == 404, "beta \(method) \(path): \(response)")
                #expect(response.errorCode == "not_found")
            }
            // And beta's task is 404 for alpha.
            #expect(try await daemon.get("/v1/tasks/\(betaTaskId)", token: a).status == 404)

            // Lists show each token its own sessions (and the shared one), and its own tasks.
            let betaSessions = try await daemon.get("/v1/sessions", token: b).object()
            let betaIds = (betaSessions["items"] as? [[String: Any]])?.compactMap { $0.string("id") } ?? []
            #expect(betaIds.count == 2 && betaIds.first == "shared" && !betaIds.contains(session) && !betaIds.contains(backgroundId))
            let alphaSessions = try await daemon.get("/v1/sessions", token: a).object()
            #expect((alphaSessions["items"] as? [[String: Any]])?.compactMap { $0.string("id") } == ["shared", session, backgroundId])
            let betaShared = try await daemon.get("/v1/sessions/shared/tasks", token: b).object()
            #expect((betaShared["items"] as? [[String: Any]])?.compactMap { $0.int("id") } == [betaTaskId])
            let alphaShared = try await daemon.get("/v1/sessions/shared/tasks", token: a).object()
            #expect((alphaShared["items"] as? [[String: Any]])?.compactMap { $0.int("id") } == [inShared])

            // The shared feed shows beta no event of alpha's tasks.
            _ = try await daemon.waitForCompletion(betaTaskId, token: b)
            let betaFeed = try await daemon.request("GET", "/v1/sessions/shared/events", token: b).object()
            let betaEventTasks = Set((betaFeed["events"] as? [[String: Any]])?.compactMap { $0.int("taskId") } ?? [])
            #expect(!betaEventTasks.contains(inShared), "beta sees alpha's task \(inShared) in the shared feed")

            // Alpha's task was untouched by beta's attempts.
            let task = try await daemon.task(held)
            #expect(task.string("state") == "suspended")
            #expect(task.isNull("description"))
            #expect(try await daemon.session(session).string("state") == "active")
            #expect(!origin.requests.contains { $0.path == "/sneaky" })
        }
    }
}
