import Foundation
import Testing
@testable import TransferModel

/// Pages of tasks (a list's page, the change feed's page) written by `TaskJSONWriter` are the
/// bytes `JSONCoding.encoder` writes for them.
@Suite struct TaskPageJSONTests {
    /// The API's list page (`Page` in TransferAPI): `next` is written as null when absent.
    struct ListPage: Encodable {
        let items: [TransferTask]
        let next: String?
        enum CodingKeys: String, CodingKey { case items, next }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(items, forKey: .items)
            try container.encode(next, forKey: .next)
        }
    }

    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test(arguments: [nil, "42", "a\"b/c"])
    func aListPageIsTheCodableForm(next: String?) throws {
        for tasks in [TaskJSONTests.tasks, []] {
            let reference = try JSONCoding.encoder.encode(ListPage(items: tasks, next: next))
            #expect(Self.text(TransferTask.jsonPage(tasks, next: next)) == Self.text(reference))
        }
    }

    @Test func aChangePageIsTheCodableForm() throws {
        for page in [TaskChangePage(tasks: TaskJSONTests.tasks, removed: [3, 17], next: 99, resync: false),
                     TaskChangePage(tasks: [], removed: [], next: 0, resync: true)] {
            #expect(Self.text(page.jsonData()) == Self.text(try JSONCoding.encoder.encode(page)))
        }
    }
}
