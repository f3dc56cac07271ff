public import FoundationEssentials

/// Pages of tasks written by `TaskJSONWriter`, byte for byte as `JSONCoding.encoder` writes them
/// (keys sorted). Why: a page of 100 tasks through JSONEncoder took about 4 ms, the whole cost of
/// `GET /v1/tasks?limit=100` and of a session's list page (issue 18's cost curves).
extension TransferTask {
    /// `{"items":[task,...],"next":cursor|null}`: a list page (`Page` in the API).
    public static func jsonPage(_ tasks: [ServedTask], next: String?) -> Data {
        var writer = TaskJSONWriter(capacity: 64 + tasks.count * 700)
        writer.raw("{\"items\":")
        writer.tasks(tasks)
        writer.raw(",\"next\":")
        writer.string(next)
        writer.raw("}")
        return writer.data()
    }
}

extension TaskChangePage {
    /// `{"next":N,"removed":[id,...],"resync":BOOL,"tasks":[task,...]}`.
    public func jsonData() -> Data {
        var writer = TaskJSONWriter(capacity: 64 + tasks.count * 700 + removed.count * 8)
        writer.raw("{\"next\":")
        writer.integer(next)
        writer.raw(",\"removed\":")
        writer.list(removed) { $0.integer($1) }
        writer.raw(",\"resync\":")
        writer.raw(resync ? "true" : "false")
        writer.raw(",\"tasks\":")
        writer.tasks(tasks)
        writer.raw("}")
        return writer.data()
    }
}

extension TaskJSONWriter {
    /// `[task,...]` in the served form; a stored one's JSON as it is.
    mutating func tasks(_ tasks: [ServedTask]) {
        list(tasks) { writer, task in
            switch task {
            case .held(let held): writer.write(held, stored: false)
            case .stored(let stored): writer.bytes.append(contentsOf: stored.json)
            }
        }
    }
}
