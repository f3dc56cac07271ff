import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Stop the daemon, start a new one on the same data folder: everything stored is still there.
@Suite struct RestartTests {
    @Test func sessionsTasksBodiesAndEventsSurviveARestart() async throws {
        let payload = Data(count: 5000) { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let origin = try OriginServer { request in
            switch request.pathWithoutQuery {
            case "/data": return .respond(headers: ["Content-Type": "image/x-test"], body: payload)
            case "/stall": return .stallAfterHeaders(contentLength: 1000, bodyPrefix: Data("part".utf8))
            default: return .text("fresh \(request.path)")
            }
        }
        defer { origin.stop() }
        try await DaemonFixture.with { first in
            let session = try #require(try await first.createSession([
                "description": "persisted", "configuration": ["timeoutIntervalForRequest": 42, "httpAdditionalHeaders": ["X-Persist": "yes"]],
            ]).string("id"))
            let background = try #require(try await first.createSession(["kind": "background", "identifier": "com.example.restart"]).string("id"))
            let gone = try #require(try await first.createSession(["kind": "default"]).string("id"))
            _ = try await first.post("/v1/sessions/\(gone)/invalidate")
            // Ephemeral sessions are kept in memory only: a restart forgets them.
            let ephemeral = try #require(try await first.createSession(["kind": "ephemeral"]).string("id"))

            let completed = try #require(try await first.dataTask(in: session, ["url": origin.url("/data")], extra: ["description": "done"]).int("id"))
            let failed = try #require(try await first.dataTask(in: session, ["url": "gopher://127.0.0.1/nope"]).int("id"))
            let suspended = try #require(try await first.dataTask(in: session, ["url": origin.url("/later")], extra: ["state": "suspended", "priority": "high"]).int("id"))
            let inShared = try #require(try await first.dataTask(in: "shared", ["url": origin.url("/data?shared")]).int("id"))
            _ = try await first.waitForCompletion(completed)
            _ = try await first.waitForCompletion(failed)
            _ = try await first.waitForCompletion(inShared)
            let running = try #require(try await first.dataTask(in: background, ["url": origin.url("/stall")]).int("id"))
            _ = try await first.waitForEvent(background) { $0.string("type") == "didReceiveResponse" && $0.int("taskId") == running }

            var sessionsBefore = try await first.get("/v1/sessions").object()
            sessionsBefore["items"] = (sessionsBefore["items"] as? [[String: Any]])?.filter { $0.string("id") != ephemeral }
            var tasksBefore: [Int: [String: Any]] = [:]
            for id in [completed, failed, suspended, inShared] { tasksBefore[id] = try await first.task(id) }
            let eventsBefore = try await first.allEvents(session)
            let backgroundEventsBefore = try await first.allEvents(background)
            #expect(eventsBefore.count >= 4)

            first.stop()
            let second = try first.restarted()
            defer { second.stop() }

            // Sessions: the same list, field for field.
            let sessionsAfter = try await second.get("/v1/sessions").object()
            #expect(jsonEqual(sessionsAfter["items"], sessionsBefore["items"]), "sessions changed across the restart")
            #expect(try await second.session(gone).string("state") == "invalidated")
            #expect(try await second.get("/v1/sessions/\(ephemeral)").status == 404)
            #expect(try await second.session(session).value(at: "configuration.httpAdditionalHeaders.X-Persist") as? String == "yes")

            // Settled tasks are exactly as they were; bodies are byte for byte the same.
            for id in [completed, failed, inShared] {
                let task = try await second.task(id)
                #expect(jsonEqual(task, tasksBefore[id]), "task \(id) changed: \(task)")
            }
            for id in [completed, inShared] {
                let body = try await second.body(id)
                #expect(body.status == 200)
                #expect(body.body == payload)
                #expect(body.header("Content-Type") == "image/x-test")
            }
            #expect(try await second.body(failed).errorCode == "no_body")

            // The suspended task waits, unchanged, and still runs when resumed.
            let waiting = try await second.task(suspended)
            #expect(waiting.string("state") == "suspended")
            #expect(waiting.double("priority") == 0.75)
            #expect(jsonEqual(waiting["originalRequest"], tasksBefore[suspended]?["originalRequest"]))
            #expect(try await second.post("/v1/tasks/\(suspended)/resume").status == 200)
            let resumed = try await second.waitForCompletion(suspended)
            #expect(resumed.isNull("error"))
            #expect(try await second.body(suspended).text == "fresh /later")
            #expect(origin.requests.last { $0.path == "/later" }?.header("X-Persist") == "yes")

            // The transfer cut off by the stop completed with networkConnectionLost.
            let cut = try await second.waitForCompletion(running)
            #expect(cut.value(at: "error.code") as? Int == -1005)
            #expect(cut.value(at: "error.name") as? String == "networkConnectionLost")

            // Feeds: the old events first, unchanged, then new ones with higher seq.
            let eventsAfter = try await second.allEvents(session)
            #expect(eventsAfter.count > eventsBefore.count)
            #expect(zip(eventsBefore, eventsAfter).allSatisfy { jsonEqual($0, $1) })
            let backgroundEventsAfter = try await second.allEvents(background)
            #expect(zip(backgroundEventsBefore, backgroundEventsAfter).allSatisfy { jsonEqual($0, $1) })
            let cutEvent = backgroundEventsAfter.last { $0.int("taskId") == running }
            #expect(cutEvent?.string("type") == "didCompleteWithError")
            #expect(cutEvent?.value(at: "error.code") as? Int == -1005)
            let lastSeqBefore = (eventsBefore + backgroundEventsBefore).compactMap { $0.int("seq") }.max() ?? 0
            #expect(eventsAfter.dropFirst(eventsBefore.count).allSatisfy { ($0.int("seq") ?? 0) > lastSeqBefore })

            // The background session reattaches; the invalidated one takes no tasks; new ids are new.
            let reattach = try await second.post("/v1/sessions", json: ["kind": "background", "identifier": "com.example.restart"])
            #expect(reattach.status == 200)
            #expect(try reattach.object().string("id") == background)
            let refused = try await second.post("/v1/sessions/\(gone)/tasks", json: ["kind": "data", "request": ["url": origin.url("/x")]])
            #expect(refused.errorCode == "session_invalidated")
            let fresh = try #require(try await second.dataTask(in: session, ["url": origin.url("/new")]).int("id"))
            #expect(fresh > [completed, failed, suspended, inShared, running].max()!)
            #expect(try await second.body(try #require(try await second.waitForCompletion(fresh).int("id"))).text == "fresh /new")
        }
    }

    @Test func tokensStillOwnTheirSessionsAfterARestart() async throws {
        let alpha = "restart-alpha", beta = "restart-beta"
        try await DaemonFixture.with(configure: { $0.tokens = [alpha, beta] }, token: alpha) { first in
            let session = try #require(try await first.createSession(["description": "alpha's"]).string("id"))
            let task = try #require(try await first.dataTask(in: session, ["url": "gopher://127.0.0.1/x"]).int("id"))
            first.stop()
            let second = try first.restarted()
            defer { second.stop() }
            #expect(try await second.get("/v1/sessions/\(session)").status == 200)
            #expect(try await second.get("/v1/tasks/\(task)").status == 200)
            #expect(try await second.get("/v1/sessions/\(session)", token: .some(beta)).status == 404)
            #expect(try await second.get("/v1/tasks/\(task)", token: .some(beta)).status == 404)
            #expect(try await second.get("/v1/sessions", token: .some(nil)).status == 401)
        }
    }

    /// A second stop does nothing and returns at once (the executable and tests may both call it).
    @Test func stoppingTwiceIsQuick() async throws {
        try await TestGate.shared.run(exclusive: false) {
            let directory = try TempDirectory(prefix: "transferd-apitest")
            defer { directory.remove() }
            let daemon = try TransferDaemon(configuration: DaemonFixture.baseConfiguration(directory))
            try daemon.start()
            let client = TestHTTPClient(port: daemon.port)
            #expect(try await client.sendAsync("GET", "/healthz").status == 200)
            try await onThread { daemon.stop() }
            let start = ContinuousClock.now
            try await onThread { daemon.stop() }
            #expect(seconds(since: start) < 1, "the second stop took \(seconds(since: start)) s")
        }
    }
}
