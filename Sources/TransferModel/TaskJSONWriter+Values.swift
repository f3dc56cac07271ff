internal import Glibc
public import FoundationEssentials
public import JSONModel

/// The values every task and event carries, written byte for byte as `JSONCoding.encoder`
/// writes them (keys sorted by their UTF-8 bytes), without Codable's boxing.
///
/// Why: a 16 KiB download made five events and three task records; encoding them through
/// JSONEncoder (and building event fields by encoding a response and decoding it back into a
/// JSONValue) was most of the store writer's CPU and a tenth of the engine thread's.
/// `TaskJSONTests` holds every writer here to the Codable form.
extension TaskJSONWriter {
    /// An event: its common keys and its fields, in one sorted object.
    mutating func write(_ event: TaskEvent) {
        // The fields (one to three, usually) are taken with their values once, sorted, and
        // merged with the common five, which are in order already. Looking each name up in a
        // set, and its value again by name, hashed it twice; the common keys were told apart by
        // comparing strings (callgrind: 15k instructions an event, 13k of them before).
        var fields: [(name: String, value: JSONValue)] = []
        fields.reserveCapacity(event.fields.count)
        for (name, value) in event.fields where !Self.isCommonEventKey(name) { fields.append((name, value)) }
        if fields.count > 1 { fields.sort { Self.precedes($0.name, $1.name) } }
        open()
        var next = 0
        for common in CommonEventKey.allCases {
            while next < fields.count, common.follows(fields[next].name) {
                key(named: fields[next].name); value(fields[next].value)
                next += 1
            }
            key(common.name)
            switch common {
            case .seq: integer(event.seq)
            case .sessionId: string(event.sessionId)
            case .taskId: if let id = event.taskId { integer(id) } else { raw("null") }
            case .time: date(event.time)
            case .type: string(event.type.rawValue)
            }
        }
        while next < fields.count {
            key(named: fields[next].name); value(fields[next].value)
            next += 1
        }
        close()
    }

    /// The keys every event has, in JSONEncoder's `.sortedKeys` order (`TaskEvent.commonKeys`
    /// is made from them).
    enum CommonEventKey: CaseIterable {
        case seq, sessionId, taskId, time, type

        var name: StaticString {
            switch self {
            case .seq: "seq"
            case .sessionId: "sessionId"
            case .taskId: "taskId"
            case .time: "time"
            case .type: "type"
            }
        }

        /// Whether this key comes after `field` in sorted order.
        func follows(_ field: String) -> Bool {
            var field = field
            return name.withUTF8Buffer { mine in field.withUTF8 { TaskJSONWriter.precedes($0, mine) } }
        }

        /// Whether `field` is this key's name.
        func isNamed(_ field: String) -> Bool {
            var field = field
            return name.withUTF8Buffer { mine in
                field.withUTF8 { $0.count == mine.count && (mine.isEmpty || memcmp($0.baseAddress!, mine.baseAddress!, mine.count) == 0) }
            }
        }
    }

    /// Whether `name` is one of the five common keys (a field of that name is not written, as
    /// `TaskEvent.encode(to:)` leaves it out); the lengths differ first, so most names cost no
    /// compare of bytes.
    static func isCommonEventKey(_ name: String) -> Bool {
        CommonEventKey.allCases.contains { $0.isNamed(name) }
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): raw(flag ? "true" : "false")
        case .integer(let number): integer(Int(number))
        case .number(let number) where number.isFinite: self.number(number)
        case .number: raw("null")  // JSON has no NaN or infinity; JSONEncoder would refuse the whole value
        case .string(let text): string(text)
        case .array(let items):
            list(items) { $0.value($1) }
        case .object(let fields):
            open()
            for entry in JSONKeyOrder.sorted(fields) {
                key(named: entry.key); self.value(entry.value)
            }
            close()
        }
    }

    mutating func response(_ info: ResponseInfo?) {
        guard let info else { return null() }
        open()
        key("expectedContentLength"); integerOrNull(info.expectedContentLength)
        key("headers"); strings(info.headers)
        key("mimeType"); string(info.mimeType)
        key("statusCode"); integer(info.statusCode)
        key("suggestedFilename"); string(info.suggestedFilename)
        key("textEncodingName"); string(info.textEncodingName)
        key("url"); string(info.url)
        close()
    }

    mutating func error(_ error: TaskError?) {
        guard let error else { return null() }
        open()
        key("code"); integer(error.code)
        key("message"); string(error.message)
        key("name"); string(error.name)
        if let reason = error.reason { key("reason"); string(reason) }
        key("resumeData"); string(error.resumeData)
        close()
    }

    mutating func strings(_ object: [String: String]) {
        open()
        // The pairs sorted together: sorting the keys and looking each value up hashed every
        // header name again (the store writer's Hasher, 3% of its instructions).
        for entry in JSONKeyOrder.sorted(object) { key(named: entry.key); string(entry.value) }
        close()
    }

    /// `[a,b,...]`, each element written by `element`.
    mutating func list<Items: Sequence>(_ items: Items, _ element: (inout TaskJSONWriter, Items.Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for item in items {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            element(&self, item)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func integerOrNull(_ value: Int?) {
        if let value { integer(value) } else { null() }
    }

    /// JSONEncoder's `.sortedKeys` order: by UTF-8 bytes, compared with memcmp (the UTF8View
    /// iterators compared a byte per step).
    static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in b.withUTF8 { y in precedes(x, y) } }
    }

    /// `precedes` on the bytes themselves.
    static func precedes(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        let common = min(x.count, y.count)
        let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
        return order != 0 ? order < 0 : x.count < y.count
    }
}

extension TaskEvent {
    /// The event as JSON, as `JSONCoding.encoder` would write it (see `TaskJSONWriter+Values`).
    public func jsonData() -> Data {
        var writer = TaskJSONWriter(capacity: 256)
        writer.write(self)
        return writer.data()
    }
}

extension EventPage {
    /// `{"events":[...],"next":N}`, as `JSONCoding.encoder` would write it.
    public func jsonData() -> Data {
        var writer = TaskJSONWriter(capacity: 64 + events.count * 256)
        writer.raw("{\"events\":")
        writer.list(events) { $0.write($1) }
        writer.raw(",\"next\":")
        writer.integer(next)
        writer.raw("}")
        return writer.data()
    }
}

extension ResponseInfo {
    /// The response as an event field: what `JSONValue(encoding:)` makes of it, built directly.
    public var jsonValue: JSONValue {
        .object([
            "expectedContentLength": expectedContentLength.map { .integer(Int64($0)) } ?? .null,
            "headers": .object(headers.mapValues { .string($0) }),
            "mimeType": mimeType.map { .string($0) } ?? .null,
            "statusCode": .integer(Int64(statusCode)),
            "suggestedFilename": suggestedFilename.map { .string($0) } ?? .null,
            "textEncodingName": textEncodingName.map { .string($0) } ?? .null,
            "url": .string(url),
        ])
    }
}

extension TaskError {
    /// The error as an event field: what `JSONValue(encoding:)` makes of it, built directly.
    public var jsonValue: JSONValue {
        var fields: [String: JSONValue] = [
            "code": .integer(Int64(code)), "message": .string(message), "name": .string(name),
            "resumeData": resumeData.map { .string($0) } ?? .null,
        ]
        if let reason { fields["reason"] = .string(reason) }
        return .object(fields)
    }
}
