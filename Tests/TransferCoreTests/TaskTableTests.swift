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
}

private extension TransferTask {
    func with(id: Int) -> TransferTask {
        var task = self
        task.id = id
        return task
    }
}
