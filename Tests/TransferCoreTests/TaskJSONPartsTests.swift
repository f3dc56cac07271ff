import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore

/// Issue 18 item 3: the writer's numbers written in place, a list written in parts, and a
/// batch's records written in parts give the bytes the Codable form gives, and a batch of rows
/// comes back from the store as it went in.
@Suite struct TaskJSONPartsTests {
    private static func task(_ id: Int, owner: String? = nil) -> TransferTask {
        let request = RequestInfo(url: "http://127.0.0.1:9/files/\(id)", method: "GET", headers: [:], bodyLength: nil,
                                  cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60, networkServiceType: .default)
        return TransferTask(id: id, sessionId: "shared", kind: .data, state: .suspended, priority: .default, description: nil,
                            request: request, owner: owner, now: Date(timeIntervalSince1970: 1_700_000_000))
    }

    private static func codable(_ task: TransferTask) throws -> String {
        String(decoding: try JSONCoding.encoder.encode(task), as: UTF8.self)
    }

    /// Whole numbers take the integer path below 10^15 and the description above; both must
    /// write what JSONEncoder writes (no ".0", -0 keeps its sign, exponents stay).
    @Test func numbersAreTheBytesOfTheCodableForm() throws {
        let doubles: [Double] = [0, -0.0, 1, -1, 60, 0.5, -2.25, 1e-7, 123_456_789, 999_999_999_999_999, 1e15, 1e15 + 2,
                                 9_007_199_254_740_992, 1e16, -1e14, 3e20, .greatestFiniteMagnitude, .leastNonzeroMagnitude]
        for value in doubles {
            var task = Self.task(1)
            task.originalRequest.timeoutInterval = value
            task.progress.bytesPerSecond = value
            #expect(String(decoding: task.jsonData(), as: UTF8.self) == (try Self.codable(task)), "\(value)")
        }
        let integers: [Int] = [0, 1, 9, 10, 99, 100, 1_000_000, -1, -10, -987_654_321, .max, .min, .max - 1, .min + 1]
        for value in integers {
            var task = Self.task(1)
            task.version = value
            task.progress.bytesReceived = value
            task.originalRequest.bodyLength = value
            #expect(String(decoding: task.jsonData(), as: UTF8.self) == (try Self.codable(task)), "\(value)")
        }
    }

    /// Any split into parts (empty ones too) joins to the list written in one piece.
    @Test func aListWrittenInPartsIsTheListWrittenWhole() {
        let tasks = (1...7).map { Self.task($0) } + TaskJSONTests.tasks
        let whole = TransferTask.jsonList(tasks, under: "tasks")
        for cuts in [[0, tasks.count], [0, 3, tasks.count], [0, 0, 5, 5, tasks.count], [0, 1, 2, 3, 4, 5, 6, 7, 8, tasks.count]] {
            let parts = zip(cuts, cuts.dropFirst()).map { TransferTask.jsonItems(tasks[$0..<$1]) }
            #expect(TransferTask.jsonList(parts: parts, under: "tasks") == whole, "\(cuts)")
        }
        #expect(TransferTask.jsonList(parts: [], under: "tasks") == TransferTask.jsonList([], under: "tasks"))
    }

    /// The records of a batch big enough to be written in parts are each task's own, in order.
    @Test func aBatchsRecordsWrittenInPartsAreEachTasksOwn() {
        let rows = (1...(Store.minimumRecordPart * 3 + 5)).map { StoreOperation.TaskRow(task: Self.task($0, owner: $0 % 2 == 0 ? "owner" : nil)) }
        let records = Store.records(of: rows)
        #expect(records.count == rows.count)
        #expect(zip(rows, records).allSatisfy { Store.json($0.task) == $1.json })
    }

    /// A batch of rows (one operation, so written in parts) is stored and read back whole.
    @Test func aBatchOfRowsComesBackFromTheStore() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let store = try Store(dataDirectory: folder.path)
        store.enqueue(.saveSession(StoreTests.session("shared")))
        let tasks = (1...(Store.minimumRecordPart * 2 + 1)).map { Self.task($0, owner: "owner-\($0)") }
        store.enqueue(.saveTasks(tasks.map { StoreOperation.TaskRow(task: $0, requestBody: $0.id == 3 ? Data("body".utf8) : nil) }))
        try store.commit()
        let loaded = try store.loadTasks()
        #expect(loaded.count == tasks.count)
        for ((task, body), expected) in zip(loaded, tasks) {
            #expect(task.jsonData(stored: true) == expected.jsonData(stored: true))
            #expect(body == (expected.id == 3 ? Data("body".utf8) : nil))
        }
        store.close()
    }
}
