import Foundation
import Synchronization
import TestSupport
import Testing
@testable import TransferEngine
@testable import TransferModel

/// The engine's updates reach the observer from the relay's thread in the order they were
/// reported, from any number of reporting threads, and all of them before `stop` returns.
@Suite struct UpdateRelayTests {
    final class Recorder: TransferObserver {
        let seen = Mutex<[(Int, Int)]>([])
        let threads = Mutex<Set<String>>([])
        /// The size of each batch handed over.
        let batches = Mutex<[Int]>([])
        /// Each completion: the location it reports, whether a file was there when it arrived,
        /// and after how many `.received` updates.
        let completions = Mutex<[(location: String?, present: Bool, after: Int)]>([])
        func transfer(_ taskId: Int, _ update: TransferUpdate) {
            if case .completed(let outcome) = update, case .success(_, _, let location, _) = outcome {
                let present = location.map { FileManager.default.fileExists(atPath: $0) } ?? false
                let after = seen.withLock { $0.count }
                completions.withLock { $0.append((location, present, after)) }
            }
            guard case .received(let bytes, _, _, _) = update else { return }
            seen.withLock { $0.append((taskId, bytes)) }
            threads.withLock { _ = $0.insert("\(pthread_self())") }
        }
        func transfers(_ batch: [(taskId: Int, update: TransferUpdate)]) {
            batches.withLock { $0.append(batch.count) }
            events.withLock { $0.append("batch of \(batch.count)") }
            for (taskId, update) in batch { transfer(taskId, update) }
        }
        /// `transfersEnded` and `transfers` calls, in order.
        let events = Mutex<[String]>([])
        func transfersEnded(_ taskIds: [Int]) {
            events.withLock { $0.append("ended \(taskIds)") }
        }
    }

    /// Transfers that ended in one turn are told first, in one call, before their batch (the
    /// files placed, the completions recorded): their connections go to the next tasks while
    /// that work is done (issue 18).
    @Test func theTransfersThatEndedAreToldBeforeTheirBatch() async throws {
        let recorder = Recorder()
        let relay = UpdateRelay(target: recorder)
        defer { relay.stop(timeout: 5) }
        relay.holdUpdates()
        relay.transfer(1, .received(bytes: 1, total: 1, expected: nil, bytesPerSecond: 0))
        relay.transfer(2, .completed(.failure(TaskError(.timedOut, "ended"))))
        relay.transfer(3, .received(bytes: 1, total: 1, expected: nil, bytesPerSecond: 0))
        relay.transfer(4, .completed(.failure(TaskError(.cancelled, "ended"))))
        relay.releaseUpdates()
        // Each wait has a deadline of its own: beside other suites on 2 cores, a sleeping test
        // task may resume seconds late.
        var deadline = ContinuousClock.now + .seconds(30)
        while recorder.events.withLock({ $0.count }) < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(recorder.events.withLock { $0 } == ["ended [2, 4]", "batch of 4"])
        // A turn in which nothing ended tells nothing.
        relay.transfer(5, .received(bytes: 1, total: 1, expected: nil, bytesPerSecond: 0))
        deadline = ContinuousClock.now + .seconds(30)
        while recorder.events.withLock({ $0.count }) < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(recorder.events.withLock { $0 } == ["ended [2, 4]", "batch of 4", "batch of 1"])
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

    /// A finished download handed over as a placement: its file is verified and put in place on
    /// the relay's thread, and its completion arrives between the updates reported before and
    /// after it, with the file already at its destination.
    @Test func aPlacementIsDeliveredAsItsCompletionInOrder() throws {
        let folder = try TempDirectory(prefix: "relay-placement")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path + "/root", withIntermediateDirectories: true)
        let file = try DownloadFile(target: DownloadTarget(
            partialPath: folder.path + "/partial/1.part", destinationPath: folder.path + "/root/done.bin",
            defaultDirectory: folder.path + "/files/1", root: folder.path + "/root"))
        let written = file.write(Data("placed off the engine thread".utf8).bytes)
        #expect(written)
        let response = ResponseInfo(statusCode: 200, headers: [:], url: "http://127.0.0.1/done.bin")
        let recorder = Recorder()
        let relay = UpdateRelay(target: recorder)
        for n in 0..<3 { relay.transfer(1, .received(bytes: n, total: n, expected: nil, bytesPerSecond: 0)) }
        relay.place(1, FilePlacement(file: file, response: response))
        for n in 3..<5 { relay.transfer(1, .received(bytes: n, total: n, expected: nil, bytesPerSecond: 0)) }
        #expect(relay.stop(timeout: 10))
        let completions = recorder.completions.withLock { $0 }
        #expect(completions.count == 1)
        #expect(completions.first?.location == folder.path + "/root/done.bin")
        #expect(completions.first?.present == true, "the completion arrived before its file was placed")
        #expect(completions.first?.after == 3, "the completion overtook or trailed the updates around it")
        #expect(recorder.seen.withLock { $0.map(\.1) } == Array(0..<5))
        #expect(FileManager.default.contents(atPath: folder.path + "/root/done.bin") == Data("placed off the engine thread".utf8))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/partial/1.part"))
    }

    @Test func stopWithNothingQueuedEnds() {
        let relay = UpdateRelay(target: Recorder())
        #expect(relay.stop(timeout: 5))
    }
}
