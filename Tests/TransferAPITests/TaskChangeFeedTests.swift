import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// GET /v1/tasks?after=V&wait=S: every task a token may see that changed after a daemon-wide
/// counter, as one long-poll (the dashboard's feed): the whole list from 0, held until a visible
/// change, deletions, another token's tasks neither listed nor waking, and cursors it cannot follow.
@Suite struct TaskChangeFeedTests {
    static let alpha = "token-alpha-0123456789"
    static let beta = "token-beta-9876543210"

    static func configure(_ configuration: inout DaemonConfiguration) {
        configuration.tokens = [alpha, beta]
    }

    /// A suspended data task: nothing changes it unless the test does.
    private func quietTask(_ daemon: DaemonFixture, token: String) async throws -> Int {
        let response = try await daemon.post("/v1/sessions/shared/tasks", json: [
            "kind": "data", "request": ["url": "http://127.0.0.1:9/quiet"], "state": "suspended",
        ], token: .some(token))
        try #require(response.status == 201, "\(response)")
        return try #require(try response.object().int("id"))
    }

    private func feed(_ daemon: DaemonFixture, after: Int, wait: Double = 0, limit: Int? = nil, token: String,
                      client: TestHTTPClient? = nil) async throws -> (ids: [Int], removed: [Int], next: Int, resync: Bool, tasks: [[String: Any]]) {
        var path = "/v1/tasks?after=\(after)&wait=\(wait)"
        if let limit { path += "&limit=\(limit)" }
        let response = try await daemon.get(path, token: .some(token), client: client)
        try #require(response.status == 200, "\(path): \(response)")
        let page = try response.object()
        #expect(Set(page.keys) == ["tasks", "removed", "next", "resync"])
        let tasks = try #require(page["tasks"] as? [[String: Any]])
        return (tasks.compactMap { $0.int("id") }, try #require(page["removed"] as? [Int]), try #require(page.int("next")),
                try #require(page.bool("resync") as Bool?), tasks)
    }

    @Test func fromZeroItListsEveryVisibleTaskInChangeOrderAndPages() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            var mine: [Int] = []
            for _ in 0..<3 { mine.append(try await quietTask(daemon, token: Self.alpha)) }
            let theirs = try await quietTask(daemon, token: Self.beta)
            // A change moves a task to the end of the order.
            _ = try await daemon.patch("/v1/tasks/\(mine[0])", json: ["description": "touched"], token: .some(Self.alpha))

            let all = try await feed(daemon, after: 0, token: Self.alpha)
            #expect(all.ids == [mine[1], mine[2], mine[0]])
            #expect(!all.ids.contains(theirs))
            #expect(all.tasks.last?.string("description") == "touched")
            #expect(all.tasks.first?.string("state") == "suspended")
            #expect(all.removed.isEmpty && !all.resync)
            #expect(try await feed(daemon, after: 0, token: Self.beta).ids == [theirs])

            // Pages of two: the cursor of a short page is the counter, of a full one its last change.
            let first = try await feed(daemon, after: 0, limit: 2, token: Self.alpha)
            #expect(first.ids == [mine[1], mine[2]])
            let second = try await feed(daemon, after: first.next, limit: 2, token: Self.alpha)
            #expect(second.ids == [mine[0]])
            #expect(second.next == all.next)
            let none = try await feed(daemon, after: all.next, token: Self.alpha)
            #expect(none.ids.isEmpty && none.next == all.next)
        }
    }

    @Test func aHeldPollIsAnsweredByAVisibleChangeOnlyAndTimesOut() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let mine = try await quietTask(daemon, token: Self.alpha)
            let theirs = try await quietTask(daemon, token: Self.beta)
            let cursor = try await feed(daemon, after: 0, token: Self.alpha).next

            let pollClient = daemon.newClient()
            let start = ContinuousClock.now
            async let held = feed(daemon, after: cursor, wait: 20, token: Self.alpha, client: pollClient)
            try await waitUntilHeld(daemon, count: 1)
            // Another token's change does not answer it.
            _ = try await daemon.patch("/v1/tasks/\(theirs)", json: ["description": "theirs"], token: .some(Self.beta))
            try await Task.sleep(for: .milliseconds(300))
            #expect(daemon.daemon.service.heldLongPolls == 1)
            let heldFor = seconds(since: start)

            _ = try await daemon.patch("/v1/tasks/\(mine)", json: ["priority": 0.9], token: .some(Self.alpha))
            let page = try await held
            let elapsed = seconds(since: start)
            #expect(page.ids == [mine])
            #expect(page.tasks.first?.double("priority") == 0.9)
            #expect(page.next > cursor)
            #expect(elapsed >= heldFor && elapsed < 5, "answered after \(elapsed) s")
            #expect(daemon.daemon.service.heldLongPolls == 0)

            // Nothing visible changes: answered empty at the deadline, with a cursor past the
            // invisible change so it is not read again.
            let quiet = ContinuousClock.now
            let empty = try await feed(daemon, after: page.next, wait: 1, token: Self.alpha)
            let waited = seconds(since: quiet)
            #expect(empty.ids.isEmpty && empty.removed.isEmpty)
            #expect(empty.next == page.next)
            #expect(waited >= 0.9 && waited < 4, "answered after \(waited) s")
            #expect(daemon.daemon.service.heldLongPolls == 0)
        }
    }

    @Test func aNewTaskAndADeletionAnswerAHeldPoll() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let cursor = try await feed(daemon, after: 0, token: Self.alpha).next
            async let created = feed(daemon, after: cursor, wait: 20, token: Self.alpha, client: daemon.newClient())
            try await waitUntilHeld(daemon, count: 1)
            let id = try await quietTask(daemon, token: Self.alpha)
            let page = try await created
            #expect(page.ids == [id])

            // Cancelled (completed), then deleted: the deletion is reported by id.
            _ = try await daemon.post("/v1/tasks/\(id)/cancel", json: [:], token: .some(Self.alpha))
            let cancelled = try await feed(daemon, after: page.next, token: Self.alpha)
            #expect(cancelled.ids == [id])
            #expect(cancelled.tasks.first?.string("state") == "completed")
            async let deleted = feed(daemon, after: cancelled.next, wait: 20, token: Self.alpha, client: daemon.newClient())
            try await waitUntilHeld(daemon, count: 1)
            let delete = try await daemon.request("DELETE", "/v1/tasks/\(id)", token: .some(Self.alpha))
            #expect(delete.status == 204)
            let gone = try await deleted
            #expect(gone.ids.isEmpty && gone.removed == [id])
            // Another token is not told of it.
            let other = try await feed(daemon, after: cancelled.next, token: Self.beta)
            #expect(other.removed.isEmpty)
            #expect(try await feed(daemon, after: 0, token: Self.alpha).ids.isEmpty)
        }
    }

    @Test func aCursorFromBeforeARestartAsksForAResync() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let id = try await quietTask(daemon, token: Self.alpha)
            let next = try await feed(daemon, after: 0, token: Self.alpha).next
            let ahead = try await feed(daemon, after: next + 1000, wait: 10, token: Self.alpha)
            #expect(ahead.resync)
            #expect(ahead.ids.isEmpty)
            daemon.stop()
            let again = try daemon.restarted()
            defer { again.stop() }
            // Loaded tasks are listed from 0 after a restart.
            #expect(try await feed(again, after: 0, token: Self.alpha).ids == [id])
        }
    }

    @Test(arguments: ["after=-1", "after=x", "wait=-1", "wait=nan", "limit=0", "limit=1001"])
    func badQueriesAreRefused(query: String) async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let response = try await daemon.get("/v1/tasks?\(query)", token: .some(Self.alpha))
            #expect(response.status == 400, "\(query): \(response)")
            #expect(response.errorCode == "invalid_query")
            #expect(try await daemon.get("/v1/tasks", token: .some(nil)).status == 401)
        }
    }

    @Test func shutdownAnswersAHeldPoll() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let cursor = try await feed(daemon, after: 0, token: Self.alpha).next
            async let held = daemon.get("/v1/tasks?after=\(cursor)&wait=30", token: .some(Self.alpha), client: daemon.newClient())
            try await waitUntilHeld(daemon, count: 1)
            let start = ContinuousClock.now
            daemon.stop()
            let response = try await held
            #expect(response.status == 200, "\(response)")
            #expect(seconds(since: start) < 5)
        }
    }
}
