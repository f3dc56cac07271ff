import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// Sessions: creation with defaults, background reattach, reading and listing, invalidation.
@Suite struct SessionTests {
    /// Every configuration property with its default, as openapi.yaml's SessionConfiguration says.
    static var configurationDefaults: [String: Any] { [
        "requestCachePolicy": "useProtocolCachePolicy",
        "timeoutIntervalForRequest": 60,
        "timeoutIntervalForResource": 604_800,
        "networkServiceType": "default",
        "allowsCellularAccess": true,
        "allowsExpensiveNetworkAccess": true,
        "allowsConstrainedNetworkAccess": true,
        "isDiscretionary": false,
        "sessionSendsLaunchEvents": true,
        "waitsForConnectivity": false,
        "connectionProxyDictionary": NSNull(),
        "tlsMinimumSupportedProtocolVersion": "TLSv12",
        "tlsMaximumSupportedProtocolVersion": "TLSv13",
        "tlsCABundle": NSNull(),
        "tlsPinnedPublicKeys": [String](),
        "tlsVerifiesServerCertificate": true,
        "ftpRequiresTLS": false,
        "httpShouldUsePipelining": false,
        "httpShouldSetCookies": true,
        "httpCookieAcceptPolicy": "onlyFromMainDocumentDomain",
        "httpAdditionalHeaders": [String: Any](),
        "httpMaximumConnectionsPerHost": 6,
        "httpVersion": "auto",
        "maximumConcurrentTasks": NSNull(),
        "maximumSegmentsPerDownload": 1,
        "decisions": [String](),
        "decisionTimeoutInterval": NSNull(),
        "urlCache": ["memoryCapacity": 4_194_304, "diskCapacity": 67_108_864],
    ] }

    /// The defaults of a kind: ephemeral sessions have a memory-only cache, background ones none.
    static func configurationDefaults(for kind: String) -> [String: Any] {
        var defaults = configurationDefaults
        if kind == "ephemeral" { defaults["urlCache"] = ["memoryCapacity": 4_194_304, "diskCapacity": 0] }
        if kind == "background" { defaults["urlCache"] = NSNull() }
        return defaults
    }

    static let sessionKeys: Set<String> = ["id", "kind", "identifier", "description", "state", "configuration", "createdAt", "invalidatedAt", "version", "acknowledgedEventSeq", "webhook"]

    @Test(arguments: ["default", "ephemeral", "background"])
    func createFillsConfigurationDefaults(kind: String) async throws {
        try await DaemonFixture.with { daemon in
            var body: [String: Any] = ["kind": kind]
            if kind == "background" { body["identifier"] = "com.example.\(kind)" }
            let before = Date().addingTimeInterval(-2)
            let response = try await daemon.post("/v1/sessions", json: body)
            #expect(response.status == 201, "\(response)")
            #expect(response.header("Content-Type") == "application/json")
            let session = try response.object()
            #expect(Set(session.keys) == Self.sessionKeys)
            let id = try #require(session.string("id"))
            #expect(!id.isEmpty && id != "shared")
            #expect(session.string("kind") == kind)
            #expect(session.string("state") == "active")
            if kind == "background" {
                #expect(session.string("identifier") == "com.example.background")
            } else {
                #expect(session.isNull("identifier"))
            }
            #expect(session.isNull("description"))
            #expect(session.isNull("invalidatedAt"))
            #expect(session.int("version") != nil)
            let createdAt = try #require(parseTimestamp(session["createdAt"]), "createdAt: \(session["createdAt"] ?? "nil")")
            #expect(createdAt >= before && createdAt <= Date().addingTimeInterval(2))
            let configuration = try #require(session.object("configuration"))
            #expect(jsonEqual(configuration, Self.configurationDefaults(for: kind)), "configuration: \(configuration)")

            // GET answers the same session.
            let fetched = try await daemon.session(id)
            #expect(jsonEqual(fetched, session))
        }
    }

    @Test func emptyBodyCreatesDefaultSession() async throws {
        try await DaemonFixture.with { daemon in
            let response = try await daemon.request("POST", "/v1/sessions")
            #expect(response.status == 201, "\(response)")
            let session = try response.object()
            #expect(session.string("kind") == "default")
            #expect(jsonEqual(session.object("configuration"), Self.configurationDefaults))
        }
    }

    @Test func givenConfigurationIsKeptAndTheRestDefaulted() async throws {
        try await DaemonFixture.with { daemon in
            let session = try await daemon.createSession([
                "kind": "ephemeral",
                "description": "crawler",
                "configuration": [
                    "timeoutIntervalForRequest": 30,
                    "httpAdditionalHeaders": ["User-Agent": "crawler/1.0"],
                    "httpMaximumConnectionsPerHost": 2,
                    "networkServiceType": "background",
                    "connectionProxyDictionary": ["HTTPSEnable": true, "HTTPSProxy": "proxy.internal", "HTTPSPort": 3128],
                    "tlsMinimumSupportedProtocolVersion": "TLSv13",
                ] as [String: Any],
            ])
            var expected = Self.configurationDefaults(for: "ephemeral")
            expected["timeoutIntervalForRequest"] = 30
            expected["httpAdditionalHeaders"] = ["User-Agent": "crawler/1.0"]
            expected["httpMaximumConnectionsPerHost"] = 2
            expected["networkServiceType"] = "background"
            expected["connectionProxyDictionary"] = ["HTTPSEnable": 1, "HTTPSProxy": "proxy.internal", "HTTPSPort": 3128] as [String: Any]  // flags are served as CFNetwork writes them
            expected["tlsMinimumSupportedProtocolVersion"] = "TLSv13"
            #expect(session.string("description") == "crawler")
            #expect(jsonEqual(session.object("configuration"), expected), "\(session.object("configuration") ?? [:])")
        }
    }

    @Test func backgroundIdentifierReattaches() async throws {
        try await DaemonFixture.with { daemon in
            let first = try await daemon.post("/v1/sessions", json: [
                "kind": "background", "identifier": "com.example.sync", "description": "first",
                "configuration": ["timeoutIntervalForRequest": 15],
            ])
            #expect(first.status == 201)
            let created = try first.object()

            // Same identifier: 200 with the same session; the new configuration is ignored.
            let again = try await daemon.post("/v1/sessions", json: [
                "kind": "background", "identifier": "com.example.sync", "description": "second",
                "configuration": ["timeoutIntervalForRequest": 99],
            ])
            #expect(again.status == 200, "\(again)")
            let reattached = try again.object()
            #expect(reattached.string("id") == created.string("id"))
            #expect(reattached.string("description") == "first")
            #expect(reattached.value(at: "configuration.timeoutIntervalForRequest") as? Int == 15)
            #expect(jsonEqual(reattached, created))

            // Another identifier is another session.
            let other = try await daemon.createSession(["kind": "background", "identifier": "com.example.other"])
            #expect(other.string("id") != created.string("id"))

            // Only one session with that identifier is listed.
            let list = try await daemon.get("/v1/sessions").object()
            let items = try #require(list["items"] as? [[String: Any]])
            #expect(items.filter { $0.string("identifier") == "com.example.sync" }.count == 1)
        }
    }

    @Test func sharedSessionExists() async throws {
        try await DaemonFixture.with { daemon in
            let shared = try await daemon.session("shared")
            #expect(shared.string("id") == "shared")
            #expect(shared.string("kind") == "default")
            #expect(shared.string("state") == "active")
            #expect(shared.isNull("identifier"))
            #expect(jsonEqual(shared.object("configuration"), Self.configurationDefaults))
        }
    }

    @Test func listPaginatesWithLimitAndCursor() async throws {
        try await DaemonFixture.with { daemon in
            var created: [String] = []
            for index in 0..<4 {
                let session = try await daemon.createSession(["description": "session \(index)"])
                created.append(try #require(session.string("id")))
            }
            // One page with everything: shared first, then creation order.
            let whole = try await daemon.get("/v1/sessions").object()
            let all = try #require(whole["items"] as? [[String: Any]])
            #expect(all.compactMap { $0.string("id") } == ["shared"] + created)
            #expect(whole.isNull("next"))

            // limit=1 and the cursor walk visit the same sessions, one per page.
            var walked: [[String: Any]] = []
            var cursor: String?
            var pages = 0
            repeat {
                var path = "/v1/sessions?limit=1"
                if let cursor { path += "&cursor=\(cursor)" }
                let response = try await daemon.get(path)
                try #require(response.status == 200, "\(response)")
                let page = try response.object()
                let items = try #require(page["items"] as? [[String: Any]])
                #expect(items.count == 1)
                walked += items
                cursor = page.string("next")
                if cursor == nil { #expect(page.isNull("next")) }
                pages += 1
            } while cursor != nil && pages < 10
            #expect(pages == 5)
            #expect(walked.count == all.count && zip(walked, all).allSatisfy { jsonEqual($0, $1) })

            // limit=3: two pages.
            let first = try await daemon.get("/v1/sessions?limit=3").object()
            #expect((first["items"] as? [[String: Any]])?.count == 3)
            let next = try #require(first.string("next"))
            let second = try await daemon.get("/v1/sessions?limit=3&cursor=\(next)").object()
            #expect((second["items"] as? [[String: Any]])?.compactMap { $0.string("id") } == Array(created.suffix(2)))
            #expect(second.isNull("next"))
        }
    }

    @Test func taskListPaginatesAndFiltersByState() async throws {
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            var suspended: [Int] = []
            var completed: [Int] = []
            for index in 0..<5 {
                if index % 2 == 0 {
                    suspended.append(try #require(try await daemon.dataTask(in: sid, ["url": "http://127.0.0.1:9/\(index)"], extra: ["state": "suspended"]).int("id")))
                } else {
                    let id = try #require(try await daemon.dataTask(in: sid, ["url": "gopher://127.0.0.1/\(index)"]).int("id"))
                    _ = try await daemon.waitForCompletion(id)
                    completed.append(id)
                }
            }
            // A task in another session is not listed.
            _ = try await daemon.dataTask(["url": "gopher://127.0.0.1/elsewhere"])

            var walked: [Int] = []
            var cursor: String?
            for _ in 0..<10 {
                let response = try await daemon.get("/v1/sessions/\(sid)/tasks?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
                try #require(response.status == 200, "\(response)")
                let page = try response.object()
                let items = try #require(page["items"] as? [[String: Any]])
                #expect(items.count <= 2)
                walked += items.compactMap { $0.int("id") }
                cursor = page.string("next")
                if cursor == nil { break }
            }
            #expect(walked == (suspended + completed).sorted())

            let onlySuspended = try await daemon.get("/v1/sessions/\(sid)/tasks?state=suspended").object()
            #expect((onlySuspended["items"] as? [[String: Any]])?.compactMap { $0.int("id") } == suspended)
            let onlyCompleted = try await daemon.get("/v1/sessions/\(sid)/tasks?state=completed&limit=1").object()
            #expect((onlyCompleted["items"] as? [[String: Any]])?.compactMap { $0.int("id") } == [completed[0]])
            let rest = try await daemon.get("/v1/sessions/\(sid)/tasks?state=completed&limit=1&cursor=\(try #require(onlyCompleted.string("next")))").object()
            #expect((rest["items"] as? [[String: Any]])?.compactMap { $0.int("id") } == [completed[1]])
            #expect(rest.isNull("next"))
            let none = try await daemon.get("/v1/sessions/\(sid)/tasks?state=canceling").object()
            #expect((none["items"] as? [Any])?.isEmpty == true)
            #expect(none.isNull("next"))
        }
    }

    @Test func invalidateWithoutTasksInvalidatesAtOnce() async throws {
        try await DaemonFixture.with { daemon in
            let id = try #require(try await daemon.createSession().string("id"))
            let response = try await daemon.post("/v1/sessions/\(id)/invalidate", json: [:] as [String: Any])
            #expect(response.status == 200, "\(response)")
            let session = try response.object()
            #expect(session.string("state") == "invalidated")
            #expect(parseTimestamp(session["invalidatedAt"]) != nil)

            let events = try await daemon.allEvents(id)
            #expect(events.count == 1)
            let event = try #require(events.last)
            #expect(event.string("type") == "didBecomeInvalid")
            #expect(event.isNull("taskId"))
            #expect(event.isNull("error"))

            // Invalidating again changes nothing; tasks are refused.
            let again = try await daemon.post("/v1/sessions/\(id)/invalidate")
            #expect(again.status == 200)
            #expect(try again.object().string("state") == "invalidated")
            let task = try await daemon.post("/v1/sessions/\(id)/tasks", json: ["kind": "data", "request": ["url": "http://127.0.0.1:9/"]])
            #expect(task.status == 409)
            #expect(task.errorCode == "session_invalidated")
            #expect(try await daemon.allEvents(id).count == 1)
        }
    }

    @Test func finishTasksAndInvalidateLetsTheRunningTaskFinish() async throws {
        let payload = Data(count: 3000) { UInt8($0 % 251) }
        let origin = try OriginServer { _ in
            // About 6 s: the invalidation and the session's read must come while it still runs,
            // under a loaded machine too (at 0.8 s, and at 2.4 s, it finished first in a full run).
            .slowBody(headers: ["Content-Type": "application/octet-stream"], body: payload, bytesPerWrite: 100, interval: .milliseconds(200))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let tid = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/slow")]).int("id"))
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didReceiveResponse" }

            let response = try await daemon.post("/v1/sessions/\(sid)/invalidate", json: ["cancelTasks": false])
            #expect(response.status == 200, "\(response)")
            #expect(try response.object().string("state") == "invalidating")
            #expect(try await daemon.session(sid).string("state") == "invalidating")

            let refused = try await daemon.post("/v1/sessions/\(sid)/tasks", json: ["kind": "data", "request": ["url": origin.url("/x")]])
            #expect(refused.status == 409)
            #expect(refused.errorCode == "session_invalidated")

            let events = try await daemon.waitForEvent(sid) { $0.string("type") == "didBecomeInvalid" }
            let task = try await daemon.task(tid)
            #expect(task.string("state") == "completed")
            #expect(task.isNull("error"))
            #expect(try await daemon.body(tid).body == payload)

            let completion = try #require(events.firstIndex { $0.string("type") == "didCompleteWithError" && $0.int("taskId") == tid })
            #expect(events[completion].isNull("error"))
            #expect(completion < events.count - 1)
            let invalid = try #require(events.last)
            #expect(invalid.isNull("taskId") && invalid.isNull("error"))

            let session = try await daemon.session(sid)
            #expect(session.string("state") == "invalidated")
            #expect(parseTimestamp(session["invalidatedAt"]) != nil)
            // The feed ends with didBecomeInvalid.
            #expect(try await daemon.allEvents(sid).last?.string("type") == "didBecomeInvalid")
        }
    }

    @Test func invalidateAndCancelCancelsRunningTasks() async throws {
        let origin = try OriginServer { _ in
            .stallAfterHeaders(headers: ["Content-Type": "text/plain"], contentLength: 1000, bodyPrefix: Data("partial".utf8))
        }
        defer { origin.stop() }
        try await DaemonFixture.with { daemon in
            let sid = try #require(try await daemon.createSession().string("id"))
            let running = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/stall")]).int("id"))
            let suspended = try #require(try await daemon.dataTask(in: sid, ["url": origin.url("/later")], extra: ["state": "suspended"]).int("id"))
            _ = try await daemon.waitForEvent(sid) { $0.string("type") == "didReceiveResponse" && $0.int("taskId") == running }

            let response = try await daemon.post("/v1/sessions/\(sid)/invalidate", json: ["cancelTasks": true])
            #expect(response.status == 200, "\(response)")
            let state = try response.object().string("state")
            #expect(state == "invalidating" || state == "invalidated")

            let events = try await daemon.waitForEvent(sid) { $0.string("type") == "didBecomeInvalid" }
            for id in [running, suspended] {
                let task = try await daemon.task(id)
                #expect(task.string("state") == "completed")
                #expect(task.value(at: "error.code") as? Int == -999)
                #expect(task.value(at: "error.name") as? String == "cancelled")
                let completion = events.first { $0.string("type") == "didCompleteWithError" && $0.int("taskId") == id }
                #expect((completion?["error"] as? [String: Any])?.int("code") == -999)
            }
            #expect(events.last?.string("type") == "didBecomeInvalid")
            #expect(try await daemon.session(sid).string("state") == "invalidated")
            // The suspended task never reached the origin.
            #expect(!origin.requests.contains { $0.path == "/later" })
        }
    }

    @Test func sharedSessionCannotBeInvalidated() async throws {
        try await DaemonFixture.with { daemon in
            for body: [String: Any] in [[:], ["cancelTasks": true]] {
                let response = try await daemon.post("/v1/sessions/shared/invalidate", json: body)
                #expect(response.status == 409, "\(response)")
                #expect(response.errorCode == "shared_session")
            }
            #expect(try await daemon.session("shared").string("state") == "active")
        }
    }
}
