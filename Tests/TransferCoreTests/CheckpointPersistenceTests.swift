import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// A download's checkpoint (partial file synced, then offset reported by the engine) reaches the
/// store at once, not with the store's next progress checkpoint: with both on 1 s timers the
/// stored offset could lag the synced file by two intervals, which a kill -9 then redownloaded
/// (DownloadKillLoopTests measured it).
@Suite struct CheckpointPersistenceTests {
    /// The race DownloadKillLoopTests hit: the store's timer saved the task, then the engine's
    /// checkpoint arrived before any other change; the store keeps a row only for a higher
    /// version, so a checkpoint saved under the same version was dropped.
    @Test func aCheckpointRightAfterTheStoreTimerSavedTheTaskIsStoredToo() async throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session()
        // Suspended: no transfer runs, so only what the test reports changes the task.
        let task = try harness.service.createTask(in: session, TaskCreate(kind: .download, request: RequestSpec(url: "http://127.0.0.1:9/never"), state: .suspended), owner: nil)
        harness.service.checkpoint()
        harness.service.store.flush()
        let state = ResumeState(offset: 12345, etag: "\"race-v1\"", lastModified: nil, expectedLength: 99999)
        harness.service.handle(task.id, .checkpoint(state))
        harness.service.store.flush()
        let stored = try harness.service.store.loadTasks().first { $0.0.id == task.id }?.0
        #expect(stored?.resume == state, "stored: \(String(describing: stored?.resume))")
    }

    @Test func anEngineCheckpointIsStoredWithoutWaitingForTheStoreTimer() async throws {
        let size = 8 << 20
        let origin = try StreamingOrigin(resource: GeneratedBytes(count: size, seed: 7), etag: "\"persist-v1\"", bytesPerSecond: 1 << 20)
        defer { origin.stop() }
        // The store's own progress checkpoint never fires here: only the engine's can store the offset.
        let harness = try ServiceHarness { $0.checkpointInterval = 3600 }
        defer { harness.stop() }
        let session = try harness.session()
        let task = try harness.service.createTask(in: session, TaskCreate(kind: .download, request: RequestSpec(url: origin.url("/f.bin"))), owner: nil)
        // The engine checkpoints after about a second of transfer; the file takes 8.
        let started = ContinuousClock.now
        var stored: ResumeState?
        while ContinuousClock.now < started + .seconds(5) {
            harness.service.store.flush()
            stored = try harness.service.store.loadTasks().first { $0.0.id == task.id }?.0.resume
            if (stored?.offset ?? 0) > 0 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let state = try #require(stored, "no checkpoint stored within 5 s")
        #expect(state.offset > 0 && state.offset < size, "\(state)")
        #expect(state.etag == "\"persist-v1\"")
        // It is an offset the file really holds, synced before it was reported.
        #expect((FileSystem.size(of: harness.folder.path + "/partial/\(task.id).part") ?? 0) >= state.offset)
    }
}
