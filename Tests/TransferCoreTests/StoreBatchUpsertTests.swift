import Foundation
import SQLite
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore

/// A batch's rows go `Store.rowsPerUpsert` to a statement (issue 18): every column of every
/// row comes out as one statement per row writes it, the version rule included, within a
/// statement, across two statements and against rows already stored.
@Suite struct StoreBatchUpsertTests {
    private static func task(_ id: Int, version: Int, state: TaskState) -> TransferTask {
        var task = StoreTests.task(id, session: "shared", version: version, state: state)
        if state == .completed { task.completedAt = Date(timeIntervalSince1970: 1_700_000_000 + Double(id)) }
        if id % 3 == 0 { task.owner = nil }
        return task
    }

    /// Rows stored before the batch: a newer version (the batch's must not replace it) and an
    /// older one (the batch's must).
    private static let stored: [StoreOperation.TaskRow] = [
        .init(task: task(7, version: 5, state: .running), feedSeq: 1),
        .init(task: task(8, version: 1, state: .running), feedSeq: 2),
    ]

    /// More than two statements' worth, with repeated tasks: an older version after a newer one
    /// in the same statement (5), a newer after an older (40, 41, in the second statement), an
    /// older one a statement later (10), and one among the rows written one by one (70).
    private static var batch: [StoreOperation.TaskRow] {
        let size = Store.rowsPerUpsert
        var rows = (1...(2 * size + 7)).map { id in
            StoreOperation.TaskRow(task: task(id, version: 2, state: id % 4 == 0 ? .completed : .suspended),
                                   requestBody: id % 5 == 0 ? Data("body \(id)".utf8) : (id == 11 ? Data() : nil), feedSeq: 100 + id)
        }
        rows.insert(.init(task: task(5, version: 1, state: .running), feedSeq: 900), at: 6)
        rows.insert(.init(task: task(40, version: 1, state: .running), feedSeq: 901), at: size + 2)
        rows.insert(.init(task: task(41, version: 3, state: .completed), feedSeq: 902), at: size + 20)
        rows.insert(.init(task: task(10, version: 1, state: .running), feedSeq: 903), at: size + 5)
        rows.append(.init(task: task(70, version: 4, state: .completed), feedSeq: 904))
        rows.append(.init(task: task(7, version: 6, state: .completed), feedSeq: 905))
        rows.append(.init(task: task(8, version: 2, state: .completed), feedSeq: 906))
        return rows
    }

    private static func rows(_ write: (Store) -> Void) throws -> [[SQLiteValue]] {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        defer { store.close() }
        store.enqueue([.saveSession(StoreTests.session("shared")), .saveTasks(stored)])
        try store.commit()
        write(store)
        try store.commit()
        return try store.reader.run("SELECT * FROM tasks ORDER BY id").map(\.values)
            + store.reader.run("SELECT * FROM completed_tasks ORDER BY owner, kind").map(\.values)
    }

    @Test func aBatchWritesEveryRowAsOneStatementPerRowDoes() throws {
        let batch = Self.batch
        #expect(batch.count > 2 * Store.rowsPerUpsert)
        let inStatementsOfManyRows = try Self.rows { $0.enqueue(.saveTasks(batch)) }
        // A batch of one row is written by the one-row statement (`.saveTask`s would be
        // coalesced in the queue first, a task's newest save taking its first one's place).
        let oneByOne = try Self.rows { store in store.enqueue(batch.map { .saveTasks([$0]) }) }
        #expect(inStatementsOfManyRows.count == oneByOne.count)
        // Row by row, so a failure names the rows that differ.
        for (many, one) in zip(inStatementsOfManyRows, oneByOne) where many != one {
            Issue.record("written in statements of many rows: \(many)\none by one: \(one)")
        }
        // The version rule held: the newest version of each repeated task is the one stored.
        let taskRows = inStatementsOfManyRows.prefix { $0.count == TaskRowColumns.count }
        #expect(taskRows.count == 2 * Store.rowsPerUpsert + 7)
        let byId = Dictionary(uniqueKeysWithValues: taskRows.map { (Int($0[0].intValue), $0) })
        #expect([5, 7, 8, 10, 40, 41, 70].map { byId[$0]?[5].intValue } == [2, 6, 2, 2, 2, 3, 4])
    }
}

private extension SQLiteValue {
    var intValue: Int64 {
        if case .integer(let value) = self { return value }
        return -1
    }
}
