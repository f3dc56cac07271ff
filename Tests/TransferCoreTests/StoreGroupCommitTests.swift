import Foundation
import Synchronization
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore

/// The writer's group commit: writes queued together share one transaction, and what waits for
/// a commit (`afterCommit`) runs only once its writes are committed.
@Suite struct StoreGroupCommitTests {
    /// Counts the writer's commits.
    final class Commits: StoreInstruments {
        let count = Atomic<Int>(0)
        func storeCommitTook(_ duration: Duration) { count.add(1, ordering: .relaxed) }
        func storeCommitFailed(reason: String) {}
    }

    @Test func writesQueuedOneByOneShareCommits() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let commits = Commits()
        let store = try Store(dataDirectory: folder.path, instruments: commits)
        defer { store.close() }
        store.enqueue(.saveSession(StoreTests.session("s")))
        // Spaced as an engine's updates are (tens of microseconds apart): drained as each came,
        // that was a commit per write, as the writer had time for each.
        for seq in 1...400 {
            store.enqueue(.appendEvent(StoreTests.event(seq, session: "s")))
            usleep(50)
        }
        store.flush()
        #expect(try store.loadRecentEvents(limit: 1_000).map(\.seq) == Array(1...400))
        // Together: about one commit per group-commit window (10 ms for SQLite), a few for the loop.
        #expect(commits.count.load(ordering: .relaxed) < 100)
    }

    @Test func afterCommitRunsOnceTheWritesBeforeItAreCommitted() async throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        store.enqueue(.saveSession(StoreTests.session("s")))
        for round in 1...20 {
            store.enqueue(.appendEvent(StoreTests.event(round, session: "s")))
            // Read on another connection when the action runs: the event is there.
            let seen: [Int] = await withCheckedContinuation { continuation in
                store.afterCommit { continuation.resume(returning: (try? store.loadRecentEvents(limit: 1_000).map(\.seq)) ?? []) }
            }
            #expect(seen.last == round)
        }
    }
}
