import Foundation
import Synchronization
import Testing
@testable import TransferEngine

/// The engine's updates reach the observer from the relay's thread in the order they were
/// reported, from any number of reporting threads, and all of them before `stop` returns.
@Suite struct UpdateRelayTests {
    final class Recorder: TransferObserver {
        let seen = Mutex<[(Int, Int)]>([])
        let threads = Mutex<Set<String>>([])
        /// The size of each batch handed over.
        let batches = Mutex<[Int]>([])
        func transfer(_ taskId: Int, _ update: TransferUpdate) {
            guard case .received(let bytes, _, _, _) = update else { return }
            seen.withLock { $0.append((taskId, bytes)) }
            threads.withLock { _ = $0.insert("\(pthread_self())") }
        }
        func transfers(_ batch: [(taskId: Int, update: TransferUpdate)]) {
            batches.withLock { $0.append(batch.count) }
            for (taskId, update) in batch { transfer(taskId, update) }
        }
    }

    @Test func aHeldTurnIsHandedOverInOneBatchWhenReleased() async throws {
        let recorder = Recorder()
        let relay = UpdateRelay(target: recorder)
        defer { relay.stop(timeout: 5) }
        relay.holdUpdates()
        for n in 0..<50 { relay.transfer(1, .received(bytes: n, total: n, expected: nil, bytesPerSecond: 0)) }
        // Held: nothing woke the thread, so nothing is delivered however long it waits.
        try await Task.sleep(for: .milliseconds(200))
        #expect(recorder.seen.withLock { $0.isEmpty })
        relay.releaseUpdates()
        let deadline = ContinuousClock.now + .seconds(10)
        while recorder.seen.withLock({ $0.count }) < 50, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(recorder.seen.withLock { $0.map(\.1) } == Array(0..<50))
        #expect(recorder.batches.withLock { $0 } == [50])
    }

    @Test func everyUpdateArrivesInOrderAndBeforeStopReturns() {
        let recorder = Recorder()
        let relay = UpdateRelay(target: recorder)
        let perThread = 20_000
        // Four reporting threads, each its own task id; each one's updates are numbered.
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for n in 0..<perThread { relay.transfer(thread, .received(bytes: n, total: n, expected: nil, bytesPerSecond: 0)) }
        }
        #expect(relay.stop(timeout: 10))
        let seen = recorder.seen.withLock { $0 }
        #expect(seen.count == 4 * perThread)
        for thread in 0..<4 {
            let numbers = seen.filter { $0.0 == thread }.map(\.1)
            #expect(numbers == Array(0..<perThread), "task \(thread)'s updates out of order or missing")
        }
        // Delivered on the relay's own thread, not the reporters'.
        #expect(recorder.threads.withLock { $0.count } == 1)
    }

    @Test func stopWithNothingQueuedEnds() {
        let relay = UpdateRelay(target: Recorder())
        #expect(relay.stop(timeout: 5))
    }
}
