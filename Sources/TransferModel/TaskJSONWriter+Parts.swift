public import FoundationEssentials

/// A long list of tasks written in parts, which the caller may write at once on several threads
/// (the model starts none), then joined in order. Why: a batch's 201 lists up to 10,000 tasks,
/// about 10 MB of JSON, written while the client waits and the machine's other cores idle.
extension TransferTask {
    /// The served JSON of `tasks`, comma-separated, without brackets: one part of a list.
    public static func jsonItems(_ tasks: ArraySlice<TransferTask>) -> Data {
        var writer = TaskJSONWriter(capacity: tasks.count * 1100)
        for index in tasks.indices {
            if index != tasks.startIndex { writer.raw(",") }
            writer.write(tasks[index], stored: false)
        }
        return writer.data()
    }

    /// `{"KEY":[...]}` from the parts `jsonItems` wrote, in their order: the same bytes as
    /// `jsonList` of the tasks the parts hold.
    public static func jsonList(parts: [Data], under key: StaticString) -> Data {
        var data = Data(capacity: parts.reduce(16 + key.utf8CodeUnitCount) { $0 + $1.count + 1 })
        data.append(contentsOf: "{\"".utf8)
        key.withUTF8Buffer { data.append(contentsOf: $0) }
        data.append(contentsOf: "\":[".utf8)
        var first = true
        for part in parts where !part.isEmpty {
            if !first { data.append(UInt8(ascii: ",")) }
            first = false
            data.append(contentsOf: part)
        }
        data.append(contentsOf: "]}".utf8)
        return data
    }
}
