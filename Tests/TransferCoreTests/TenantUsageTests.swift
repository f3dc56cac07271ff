import Testing
import FoundationEssentials
@testable import TransferModel

/// `TenantUsage` keeps what each task was counted as in one word (unfinished flag and bytes):
/// every change and removal still takes back exactly what was counted.
@Suite struct TenantUsageTests {
    private func task(_ id: Int, owner: String?, state: TaskState = .running, received: Int = 0, kind: TaskKind = .download) -> TransferTask {
        var task = TaskJSONTests.tasks[0]
        task.id = id
        task.owner = owner
        task.kind = kind
        task.lifecycle = TaskMachine(restoring: state, phase: state == .completed ? .done : .queued)
        task.progress.bytesReceived = received
        return task
    }

    @Test func changesAndRemovalsTakeBackWhatWasCounted() {
        var usage = TenantUsage()
        let big = 1 << 60
        usage.note(task(1, owner: "a", received: big))
        usage.note(task(2, owner: "a", received: 7))
        usage.note(task(3, owner: nil, received: 5))
        #expect(usage.unfinishedTasks(of: "a") == 2 && usage.heldBytes(of: "a") == big + 7)
        #expect(usage.unfinishedTasks(of: nil) == 1 && usage.heldBytes(of: nil) == 5)
        usage.note(task(1, owner: "a", state: .completed, received: big + 1))
        #expect(usage.unfinishedTasks(of: "a") == 1 && usage.heldBytes(of: "a") == big + 8)
        usage.note(task(2, owner: "a", received: -3))  // never counted below zero
        #expect(usage.heldBytes(of: "a") == big + 1)
        usage.note(task(4, owner: "a", received: 100, kind: .stream))  // passes through, not kept
        #expect(usage.unfinishedTasks(of: "a") == 2 && usage.heldBytes(of: "a") == big + 1)
        for id in 1...4 { usage.remove(task(id, owner: id == 3 ? nil : "a")) }
        #expect(usage.unfinishedTasks(of: "a") == 0 && usage.heldBytes(of: "a") == 0)
        #expect(usage.unfinishedTasks(of: nil) == 0 && usage.heldBytes(of: nil) == 0)
    }
}
