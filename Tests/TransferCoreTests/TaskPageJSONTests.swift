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

    /// A stored record leaves its null members out (issue 18: a queued task's record was half
    /// nulls) and decodes as the task its full form decodes as; a record a version before wrote
    /// in full, under a note without the mark, is still cut to the served form.
    @Test func aStoredRecordLeavesItsNullsOutAndDecodesAsTheFullForm() throws {
        for var task in TaskJSONTests.tasks {
            task.owner = "0123456789abcdef"
            let (record, cut) = task.storedRecord()
            let full = task.jsonData(stored: true)
            #expect(record.count < full.count)
            #expect(cut.hasPrefix(TransferTask.formId + "~:"))
            let object = try #require(try JSONSerialization.jsonObject(with: record) as? [String: Any])
            #expect(Self.nullPaths(object, at: "").isEmpty, "\(Self.nullPaths(object, at: ""))")
            let lean = try JSONCoding.decoder.decode(TransferTask.self, from: record)
            #expect(lean == (try JSONCoding.decoder.decode(TransferTask.self, from: full)))
        }
        var plain = try #require(TaskJSONTests.tasks.first)
        plain.owner = nil
        let full = plain.jsonData(stored: true)
        #expect(TransferTask.servedJSON(fromStored: full, cut: TransferTask.formId + ":").map(Self.text) == Self.text(plain.jsonData()))
    }

    /// Where `value` holds a null, outside the values the writer copies as JSONEncoder wrote them
    /// (their nulls are theirs: a stored record only leaves out the members it names itself).
    static func nullPaths(_ value: Any, at path: String) -> [String] {
        let copied: Set<String> = ["bandwidthLimit", "bodyStream", "decision", "mirrors", "responseDisposition", "resumable", "resume", "streamedBody"]
        switch value {
        case is NSNull: return [path]
        case let object as [String: Any]:
            return object.flatMap { key, member in copied.contains(key) ? [] : nullPaths(member, at: path + "/" + key) }
        case let array as [Any]:
            return array.enumerated().flatMap { nullPaths($1, at: path + "/\($0)") }
        default: return []
        }
    }

    /// Putting the nulls back reads only a record of the shape it knows: another member, a
    /// missing one every task has, or broken bytes give nil, and the store decodes instead.
    @Test func restoringNullsRefusesWhatIsNotARecordItKnows() throws {
        let task = try #require(TaskJSONTests.tasks.last)
        let (record, cut) = task.storedRecord()
        let lean = try #require(TransferTask.servedJSON(fromStored: record, cut: cut.replacingOccurrences(of: "~", with: "")))
        #expect(ServedNulls.restore(lean).map(Self.text) == Self.text(task.jsonData()))
        // Its table of the task's members is the served form's.
        #expect(ServedNulls.task.map { "\($0.name)" } == TransferTask.servedKeys)
        // Strings that end in a backslash or hold escaped quotes are skipped whole.
        var awkward = task
        awkward.description = "ends in a backslash \\"
        awkward.destination = "a \"quoted\\\" name\\\\"
        awkward.originalRequest.headers["X-Escapes"] = "\\\"\\"
        let (awkwardRecord, awkwardCut) = awkward.storedRecord()
        #expect(TransferTask.servedJSON(fromStored: awkwardRecord, cut: awkwardCut).map(Self.text) == Self.text(awkward.jsonData()))
        let text = Self.text(lean)
        let foreign = [
            text.replacingOccurrences(of: "\"id\":", with: "\"idx\":"),  // a member it does not know, a required one gone
            text.replacingOccurrences(of: "\"kind\":\"\(task.kind.rawValue)\",", with: ""),  // a required member gone
            String(text.dropLast()),  // cut short
            text + " ",  // bytes after the record
            "{}", "", "[]", "{\"bandwidthLimit\":",
        ]
        for bytes in foreign {
            #expect(ServedNulls.restore(Data(bytes.utf8)) == nil, "\(bytes.prefix(80))")
        }
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
