import Foundation
import Synchronization
import Testing
import TestSupport
@testable import ClusterStore
import PostgreSQL

/// Changes between nodes over LISTEN/NOTIFY: what a committed transaction sends arrives, in
/// order; what a rolled-back one sent never does; a listener whose connection is lost connects
/// again and says that it may have missed changes.
@Suite struct ClusterChangeTests {
    @Test func payloadsRoundTripAndOddOnesAreRefused() {
        #expect(ClusterChange(session: "s1", task: 42).payload == "s1 42")
        #expect(ClusterChange(session: "s1", task: nil).payload == "s1")
        #expect(ClusterChange(payload: "s1 42") == ClusterChange(session: "s1", task: 42))
        #expect(ClusterChange(payload: "s1") == ClusterChange(session: "s1", task: nil))
        for odd in ["", " 4", "s x", "s 1 2", "s "] { #expect(ClusterChange(payload: odd) == nil, "\(odd)") }
    }

    /// Waits up to 10 s for `condition` over what the listener handed over.
    private static func wait(_ seen: borrowing Mutex<[ClusterChangeListener.Event]>, until condition: ([ClusterChangeListener.Event]) -> Bool) -> [ClusterChangeListener.Event] {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let events = seen.withLock { $0 }
            if condition(events) { return events }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return seen.withLock { $0 }
    }

    @Test func committedChangesArriveInOrderAndRolledBackOnesNever() throws {
        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let seen = Mutex<[ClusterChangeListener.Event]>([])
        let listener = try ClusterChangeListener(url: scratch.url) { event in seen.withLock { $0.append(event) } }
        defer { listener.stop() }
        let sender = try scratch.connect()
        defer { sender.close() }

        let first = ClusterChange(session: "a", task: 1), lost = ClusterChange(session: "a", task: 2)
        let last = ClusterChange(session: "b", task: nil)
        try sender.transaction { tx in try first.send(in: tx) }
        struct Abandon: Error {}
        #expect(throws: Abandon.self) { try sender.transaction { tx in try lost.send(in: tx); throw Abandon() } }
        try last.send(on: sender)

        let events = Self.wait(seen) { events in events.flatMap(\.changeList).contains(last) }
        #expect(events.flatMap(\.changeList) == [first, last], "\(events)")
        #expect(!events.contains(ClusterChangeListener.Event.resync))
    }

    @Test func aLostConnectionIsFollowedByAResyncAndListeningGoesOn() throws {
        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let seen = Mutex<[ClusterChangeListener.Event]>([])
        let listener = try ClusterChangeListener(url: scratch.url, retryDelay: 0.2) { event in seen.withLock { $0.append(event) } }
        defer { listener.stop() }
        let admin = try scratch.connect()
        defer { admin.close() }
        // The listener's own server process, in this test's database only.
        let killed = try admin.run("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'
            """)
        #expect(killed.count == 1)
        let afterLoss = Self.wait(seen) { $0.contains(ClusterChangeListener.Event.resync) }
        #expect(afterLoss.contains(ClusterChangeListener.Event.resync), "\(afterLoss)")

        let change = ClusterChange(session: "c", task: 7)
        try change.send(on: admin)
        let events = Self.wait(seen) { $0.flatMap(\.changeList).contains(change) }
        #expect(events.last?.changeList == [change], "\(events)")
    }
}

private extension ClusterChangeListener.Event {
    var changeList: [ClusterChange] {
        if case .changes(let changes) = self { return changes }
        return []
    }
}
