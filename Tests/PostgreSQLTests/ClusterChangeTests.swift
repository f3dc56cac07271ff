import Foundation
import Synchronization
import Testing
import TestSupport
@testable import ClusterStore
import PostgreSQL
import TransferStore

/// Changes between nodes over LISTEN/NOTIFY: what a committed transaction sends arrives, in
/// order; what a rolled-back one sent never does; a listener whose connection is lost connects
/// again and says that it may have missed changes.
@Suite struct ClusterChangeTests {
    @Test func payloadsRoundTripAndOddOnesAreRefused() {
        let signals: [ClusterSignal] = [.feed(session: "s1"), .task(session: "s1", id: 42), .tasks(session: "s1"), .session("s1"), .queue,
                                        .command(id: 7, node: "host a:8080"), .answer(id: 7), .setting("bandwidth_limits")]
        #expect(signals.map(ClusterChange.payload) == ["f s1", "t s1 42", "T s1", "s s1", "q", "c 7 host a:8080", "a 7", "S bandwidth_limits"])
        for signal in signals { #expect(ClusterChange.signal(payload: ClusterChange.payload(signal)) == signal) }
        for odd in ["", "q ", "Q", "f", "f ", "t s", "t s x", "t s 1 2", "c 1", "c x n", "c 1 ", "a", "a x", "x s1", "s1 42", "S"] {
            #expect(ClusterChange.signal(payload: odd) == nil, "\(odd)")
        }
    }

    /// Waits up to 10 s for `condition` over what the listener handed over.
    private static func wait(_ seen: borrowing Mutex<[ClusterHeard]>, until condition: ([ClusterHeard]) -> Bool) -> [ClusterHeard] {
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
        let seen = Mutex<[ClusterHeard]>([])
        let listener = try ClusterChangeListener(url: scratch.url) { event in seen.withLock { $0.append(event) } }
        defer { listener.stop() }
        let sender = try scratch.connect()
        defer { sender.close() }

        let first = ClusterSignal.task(session: "a", id: 1), second = ClusterSignal.command(id: 3, node: "n1")
        let lost = ClusterSignal.task(session: "a", id: 2), last = ClusterSignal.feed(session: "b")
        try sender.transaction { tx in try ClusterChange.send([first, second], in: tx) }
        struct Abandon: Error {}
        #expect(throws: Abandon.self) { try sender.transaction { tx in try ClusterChange.send([lost], in: tx); throw Abandon() } }
        try ClusterChange.send(last, on: sender)

        let events = Self.wait(seen) { events in events.flatMap(\.changeList).contains(last) }
        #expect(events.flatMap(\.changeList) == [first, second, last], "\(events)")
        #expect(!events.contains(ClusterHeard.resync))
    }

    @Test func aLostConnectionIsFollowedByAResyncAndListeningGoesOn() throws {
        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let seen = Mutex<[ClusterHeard]>([])
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
        let afterLoss = Self.wait(seen) { $0.contains(ClusterHeard.resync) }
        #expect(afterLoss.contains(ClusterHeard.resync), "\(afterLoss)")

        let change = ClusterSignal.task(session: "c", id: 7)
        try ClusterChange.send(change, on: admin)
        let events = Self.wait(seen) { $0.flatMap(\.changeList).contains(change) }
        #expect(events.last?.changeList == [change], "\(events)")
    }
}

private extension ClusterHeard {
    var changeList: [ClusterSignal] {
        if case .signals(let signals) = self { return signals }
        return []
    }
}
