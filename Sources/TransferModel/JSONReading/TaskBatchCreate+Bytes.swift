public import FoundationEssentials

/// `POST /v1/sessions/{sid}/tasks:batch` read straight from the body's bytes: each spec by
/// `TaskCreate.read` when it has the common shape, and a spec of another shape by
/// `JSONCoding.decoder` from its own bytes, so one unusual spec does not slow the other 9,999.
/// As `TaskCreate.read`: a value only when `init(from:)` would give the same one; nil for any
/// body that is not, or that holds an error (the caller's `JSONCoding.decoder` then reports it,
/// with the spec's index in its field).
extension TaskBatchCreate {
    /// The batch in `body`, or nil when the body is not one this reader is sure of.
    public static func read(json body: Data) -> TaskBatchCreate? {
        body.withUnsafeBytes { raw in
            var reader = JSONByteReader(raw)
            guard let tasks = try? readTasks(&reader), (try? reader.end()) != nil else { return nil }
            return TaskBatchCreate(tasks: tasks)
        }
    }

    private static func readTasks(_ reader: inout JSONByteReader) throws(JSONByteReader.Unread) -> [TaskCreate] {
        try reader.beginObject()
        var first = true
        guard let key = try reader.nextKey(&first), JSONByteReader.key(key, is: "tasks") else { throw JSONByteReader.Unread() }
        var tasks: [TaskCreate] = []
        try reader.beginArray()
        var firstElement = true
        while try reader.nextElement(&firstElement) {
            // Over the limit: `init(from:)` refuses it before decoding any spec.
            guard tasks.count < maxCount else { throw JSONByteReader.Unread() }
            let start = reader.index
            tasks.append(try readSpec(&reader))
            if tasks.count == 1 {
                // As many again as the first spec's size fits in the rest (specs of a batch are
                // alike): growing by doubling copied the specs read so far each time.
                tasks.reserveCapacity(1 + min(maxCount, reader.remaining / max(1, reader.index - start)))
            }
        }
        // `tasks` alone, and at least one.
        guard try reader.nextKey(&first) == nil, !tasks.isEmpty else { throw JSONByteReader.Unread() }
        return tasks
    }

    /// One spec: read in place, or decoded alone from its bytes when its shape is another.
    private static func readSpec(_ reader: inout JSONByteReader) throws(JSONByteReader.Unread) -> TaskCreate {
        var attempt = reader
        if let task = try? TaskCreate.read(&attempt) {
            reader = attempt
            return task
        }
        let start = reader.index
        try reader.skipValue()
        let bytes = Data(reader.bytes(from: start))
        guard let task = try? JSONCoding.decoder.decode(TaskCreate.self, from: bytes) else { throw JSONByteReader.Unread() }
        return task
    }
}
