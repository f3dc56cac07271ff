import Testing
import FoundationEssentials
@testable import TransferModel
@testable import TransferService

/// `TaskTable` holds each entry in a box but behaves as the dictionary of entries it replaced.
@Suite struct TaskTableTests {
    private static func entry(_ id: Int) -> TaskEntry {
        TaskEntry(task: TaskJSONTests.tasks[0].with(id: id), requestBody: nil)
    }

    @Test func setGetChangeAndRemove() {
        var table = TaskTable()
        #expect(table[1] == nil && table.count == 0)
        table[1] = Self.entry(1)
        table[2] = Self.entry(2)
        #expect(table.count == 2 && Set(table.keys) == [1, 2])
        table[1]?.task.description = "changed"
        table[1]?.transactions.append(contentsOf: [])
        table[1]?.inEngine = true
        #expect(table[1]?.task.description == "changed" && table[1]?.inEngine == true)
        #expect(table[2]?.task.description == nil && table[2]?.inEngine == false)
        table[3]?.inEngine = true  // absent: nothing is added
        #expect(table[3] == nil && table.count == 2)
        #expect(table.removeValue(forKey: 1)?.task.id == 1)
        #expect(table.removeValue(forKey: 1) == nil)
        table[2] = nil
        #expect(table.count == 0 && table.keys.isEmpty)
    }

    @Test func aCopyDoesNotSeeLaterChanges() {
        var table = TaskTable()
        table[1] = Self.entry(1)
        let copy = table
        table[1]?.task.description = "after the copy"
        table[1] = nil
        table[5] = Self.entry(5)
        var second = copy
        second[1]?.task.version = 99
        #expect(copy[1]?.task.description == nil && copy[1]?.task.version == 1)
        #expect(second[1]?.task.version == 99)
        #expect(copy.count == 1 && copy[5] == nil)
        #expect(table[1] == nil && table[5]?.task.id == 5)
    }

    /// Reads go through the entry's address in its box: each key reads its own entry, and an
    /// entry taken out is whole (read before its box goes).
    @Test func everyKeyReadsItsOwnEntryAndARemovedOneIsWhole() {
        var table = TaskTable()
        for id in 1...100 { table[id] = Self.entry(id) }
        #expect(Set(table.keys) == Set(1...100))
        #expect(table.keys.allSatisfy { table[$0]?.task.id == $0 && table[$0]?.task.sessionId == Self.entry($0).task.sessionId })
        for id in stride(from: 1, through: 99, by: 2) {
            let removed = table.removeValue(forKey: id)
            #expect(removed?.task.id == id && removed?.task.originalRequest == Self.entry(id).task.originalRequest)
        }
        #expect(table.count == 50 && table[1] == nil && table[2]?.task.id == 2)
    }

    private static func walk(_ table: TaskTable) -> [TaskCensus.Key: Int] {
        var counts: [TaskCensus.Key: Int] = [:]
        for id in table.keys { counts[TaskCensus.Key(table[id])!, default: 0] += 1 }
        return counts
    }

    /// The census counts what a walk of the entries counts, after every kind of change: set,
    /// change in place (also through a copy's own box), removal by nil and by `removeValue`.
    @Test func theCensusCountsWhatAWalkCounts() {
        var table = TaskTable()
        for id in 1...40 { table[id] = Self.entry(id) }
        #expect(table.census.counts == Self.walk(table) && table.census.counts.values.reduce(0, +) == 40)
        for id in stride(from: 1, through: 40, by: 3) { table[id]?.task.lifecycle = TaskMachine(restoring: .suspended, phase: .queued) }
        for id in stride(from: 2, through: 40, by: 5) { table[id]?.inEngine = true }
        for id in stride(from: 3, through: 40, by: 7) { table[id]?.task.lifecycle = TaskMachine(restoring: .running, phase: .waiting) }
        table[4]?.task.kind = .download
        table[5]?.task.originalRequest.networkServiceType = .background
        let copy = table
        table[6]?.task.lifecycle = TaskMachine(restoring: .completed, phase: .done)  // the copy keeps its own
        table[7] = nil
        table.removeValue(forKey: 8)
        table[9]?.task.lifecycle = TaskMachine(restoring: .completed, phase: .done)
        table[10] = Self.entry(10)  // replaced whole
        #expect(table.census.counts == Self.walk(table))
        #expect(copy.census.counts == Self.walk(copy) && copy.census.counts.values.reduce(0, +) == 40)
        #expect(table.census.count { $0.state == .completed } == 2)
        #expect(table.census.count { $0.schedulingClass == .background } == 1)
        #expect(table.census.count { $0.state == .suspended } == Self.walk(table).filter { $0.key.state == .suspended }.values.reduce(0, +))
        for id in Array(table.keys) { table[id] = nil }
        #expect(table.census.counts.isEmpty)
    }
}

private extension TransferTask {
    func with(id: Int) -> TransferTask {
        var task = self
        task.id = id
        return task
    }
}
