import Testing
import FoundationEssentials
@testable import TransferModel
@testable import TransferService

/// A queued task's entry in the service's table stays small: the parts absent until a task
/// runs or completes, and those few tasks have, are kept out of line (`Indirect`). Inline, they
/// made an entry 1,184 bytes (bench/scheduler.sh part d: KiB per queued task). Each entry is a
/// box of its own in `TaskTable`, so this is what every queued task costs before its strings.
@Suite struct TaskEntryLayoutTests {
    @Test func aQueuedTasksEntryKeepsItsAbsentPartsOutOfLine() {
        // (496 and 432 since the pending decision, issue 21: one pointer, absent while queued;
        // the task's decision list and dataInEvents sit in padding.)
        #expect(MemoryLayout<TaskEntry>.stride <= 496)
        #expect(MemoryLayout<TransferTask>.stride <= 432)
    }

    /// `TaskCensus.Key` hashes and compares the cases' tag bytes: each enum must be one byte,
    /// and every pair of cases must give different keys.
    @Test func theCensusKeyTellsEveryCaseApart() {
        #expect(MemoryLayout<TaskState>.size == 1 && MemoryLayout<TaskPhase>.size == 1)
        #expect(MemoryLayout<TaskKind>.size == 1 && MemoryLayout<SchedulingClass>.size == 1)
        var seen: Set<UInt64> = []
        var keys = 0
        for state in TaskState.allCases {
            for phase in TaskPhase.allCases {
                for kind in TaskKind.allCases {
                    for schedulingClass in SchedulingClass.allCases {
                        for inEngine in [false, true] {
                            let key = TaskCensus.Key(state: state, phase: phase, kind: kind, schedulingClass: schedulingClass, inEngine: inEngine)
                            seen.insert(key.packed)
                            keys += 1
                        }
                    }
                }
            }
        }
        // And an entry's key reads the entry's fields.
        let entry = TaskEntry(task: TaskJSONTests.tasks[0], requestBody: nil)
        let key = TaskCensus.Key(entry)
        #expect(key == TaskCensus.Key(state: entry.task.state, phase: entry.task.phase, kind: entry.task.kind,
                                      schedulingClass: entry.task.schedulingClass, inEngine: entry.inEngine))
        #expect(seen.count == keys, "two different keys packed alike")
    }

    @Test func theQueuedInstantKeepsItsValue() {
        var entry = TaskEntry(task: TaskJSONTests.tasks[0], requestBody: nil)
        #expect(entry.queuedAt == nil)
        let instant = ContinuousClock.now.advanced(by: .nanoseconds(1_234_567))
        entry.queuedAt = instant
        #expect(entry.queuedAt == instant)
        let later = instant.advanced(by: .seconds(86_400 * 400))
        entry.queuedAt = later
        #expect(entry.queuedAt == later)
        entry.queuedAt = nil
        #expect(entry.queuedAt == nil)
    }

    @Test func theRarePartsOfAnEntryKeepTheirValues() {
        var entry = TaskEntry(task: TaskJSONTests.tasks[0], requestBody: nil)
        #expect(entry.rare == nil)
        let login = URLLogin.split("http://u:p@h/").login
        #expect(login != nil)
        entry.urlLogin = login
        entry.responseBody = Data([1, 2, 3])
        entry.connectivityTries = 2
        let copy = entry
        entry.connectivityTries = 3
        #expect(copy.connectivityTries == 2 && entry.connectivityTries == 3)
        #expect(entry.urlLogin == login && entry.responseBody == Data([1, 2, 3]))
        entry.urlLogin = nil
        entry.responseBody = nil
        #expect(entry.rare != nil && entry.urlLogin == nil && entry.responseBody == nil)
        entry.connectivityTries = nil
        #expect(entry.rare == nil)  // nothing left: no box
    }

    @Test func fieldsKeptOutOfLineKeepTheirValues() {
        var task = TaskJSONTests.tasks[0]
        task.description = "d"
        task.sealedLogin = "sealed"
        task.bodyStream = BodyStreamState()
        task.earliestBeginDate = Date(timeIntervalSince1970: 1_800_000_000)
        task.responseDisposition = ResponseDisposition(default: .cancel)
        task.segments = 4
        task.conflict = .rename
        task.cacheStatus = .network
        let copy = task
        task.segments = 5
        task.description = nil
        #expect(copy.segments == 4 && copy.description == "d" && copy != task)
        #expect(copy.sealedLogin == "sealed" && copy.bodyStream == BodyStreamState())
        #expect(copy.earliestBeginDate == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(copy.responseDisposition == ResponseDisposition(default: .cancel) && copy.conflict == .rename && copy.cacheStatus == .network)
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
