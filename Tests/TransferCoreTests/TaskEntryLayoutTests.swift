import Testing
@testable import TransferModel
@testable import TransferService

/// A queued task's entry in the service's table stays small: the parts absent until a task
/// runs or completes are kept out of line (`Indirect`). Inline, they made an entry 1,184 bytes
/// (bench/scheduler.sh part d: KiB per queued task).
@Suite struct TaskEntryLayoutTests {
    @Test func aQueuedTasksEntryKeepsItsAbsentPartsOutOfLine() {
        #expect(MemoryLayout<TaskEntry>.stride <= 640)
        #expect(MemoryLayout<TransferTask>.stride <= 512)
    }

    @Test func anIndirectValueIsAValue() {
        var a = Indirect<ResumeState>(wrappedValue: nil)
        #expect(a.wrappedValue == nil)
        a.wrappedValue = ResumeState(offset: 5, etag: "\"e\"", lastModified: nil, expectedLength: 10)
        var b = a
        b.wrappedValue?.offset = 7
        #expect(a.wrappedValue?.offset == 5)
        #expect(b.wrappedValue?.offset == 7)
        #expect(a != b)
        b.wrappedValue = nil
        #expect(b.wrappedValue == nil && a.wrappedValue != nil)
    }
}
