import Foundation
import Testing
@testable import TransferModel

/// Pages of tasks (a list's page, the change feed's page) written by `TaskJSONWriter` are the
/// bytes `JSONCoding.encoder` writes for them.
@Suite struct TaskPageJSONTests {
    /// The API's list page (`Page` in TransferAPI): `next` is written as null when absent.
    struct ListPage: Encodable {
        let items: [ServedTask]
        let next: String?
        enum CodingKeys: String, CodingKey { case items, next }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(items, forKey: .items)
            try container.encode(next, forKey: .next)
        }
    }

    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    /// Held tasks and stored ones (their served JSON cut from the stored form) in one page.
    static var mixed: [ServedTask] {
        TaskJSONTests.tasks.enumerated().map { index, task in
            let (record, cut) = task.storedRecord()
            guard index % 2 == 1, let json = TransferTask.servedJSON(fromStored: record, cut: cut) else { return .held(task) }
            return .stored(StoredTaskJSON(id: task.id, sessionId: task.sessionId, owner: task.owner, state: task.state, json: json))
        }
    }

    /// The stored form without its stored-only members is the served form, byte for byte; a
    /// record without a note, or with another shape's, is not cut.
    @Test func aStoredRecordCutsToTheServedForm() throws {
        for var task in TaskJSONTests.tasks {
            task.owner = "0123456789abcdef"
            task.sealedLogin = "sealed, with \"owner\": in it"
            let (record, cut) = task.storedRecord()
            #expect(record != task.jsonData())
            #expect(TransferTask.servedJSON(fromStored: record, cut: cut).map(Self.text) == Self.text(task.jsonData()))
        }
        // The writer's members are the list the note's shape is named by.
        let task = try #require(TaskJSONTests.tasks.first)
        let object = try #require(try JSONSerialization.jsonObject(with: task.jsonData()) as? [String: Any])
        #expect(object.keys.sorted() == TransferTask.servedKeys)
        let (record, cut) = task.storedRecord()
        #expect(TransferTask.servedJSON(fromStored: record, cut: nil) == nil)
        #expect(TransferTask.servedJSON(fromStored: record, cut: "0123:" + cut.split(separator: ":").last!) == nil)
        #expect(TransferTask.servedJSON(fromStored: record, cut: TransferTask.formId + ":5-\(record.count + 1)") == nil)
    }

    @Test(arguments: [nil, "42", "a\"b/c"])
    func aListPageIsTheCodableForm(next: String?) throws {
        for tasks in [Self.mixed, []] {
            let reference = try JSONCoding.encoder.encode(ListPage(items: tasks, next: next))
            #expect(Self.text(TransferTask.jsonPage(tasks, next: next)) == Self.text(reference))
        }
    }

    @Test func aChangePageIsTheCodableForm() throws {
        for page in [TaskChangePage(tasks: Self.mixed, removed: [3, 17], next: 99, resync: false),
                     TaskChangePage(tasks: [], removed: [], next: 0, resync: true)] {
            #expect(Self.text(page.jsonData()) == Self.text(try JSONCoding.encoder.encode(page)))
        }
    }
}
