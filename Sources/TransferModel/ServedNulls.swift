public import FoundationEssentials

/// Puts back the null members a stored task record leaves out (`TaskJSONWriter.omitsNulls`),
/// giving the served form byte for byte, as `TaskJSONWriter.write(_:stored: false)` writes it.
///
/// Why: a queued task's record was about half nulls (`"bandwidthLimit":null`, ...), and the
/// store writes every record at least once; records without them are half the bytes, which
/// SQLite writes at about 1.5 times the rows a second (issue 18, `bench/sqlite_floor.py`). A
/// served page cuts its tasks out of the stored records (`servedJSON(fromStored:cut:)`); this
/// one pass over the bytes keeps that path free of decoding.
///
/// It knows the served form's objects whose members may be left out: the task, its requests,
/// progress, response and error. Other values are copied as they are (the writer leaves nulls
/// out only where it names a member itself). Anything that does not fit (a member it does not
/// know, a required one missing, bytes that are not such an object) gives nil, and the caller
/// decodes the record instead.
enum ServedNulls {
    /// `lean`'s served form with its nulls back, or nil when it is not a record this knows.
    static func restore(_ lean: Data) -> Data? {
        lean.withUnsafeBytes { raw -> Data? in
            var restorer = Restorer(input: raw.bindMemory(to: UInt8.self))
            guard restorer.object(.task), restorer.at == raw.count else { return nil }
            return Data(restorer.out)
        }
    }

    /// The objects of the served form that a stored record may hold without some members.
    enum Shape { case task, request, progress, response, error }

    /// What a member's absence from a stored record means.
    enum Absence {
        /// Its value was null: written back as null.
        case null
        /// The served form leaves it out too when it is unset (an error's reason).
        case nothing
        /// Every record has it: without it, the bytes are not a record this knows.
        case invalid
    }

    struct Member {
        let name: [UInt8]
        let whenAbsent: Absence
        /// The object its value is, when that object may lack members too.
        let shape: Shape?

        init(_ name: String, _ whenAbsent: Absence, _ shape: Shape? = nil) {
            self.name = Array(name.utf8)
            self.whenAbsent = whenAbsent
            self.shape = shape
        }
    }

    /// Each shape's members in the order the writer writes them (`TaskJSONWriter`), which is
    /// the order of their names' bytes.
    static func members(of shape: Shape) -> [Member] {
        switch shape {
        case .task: task
        case .request: request
        case .progress: progress
        case .response: response
        case .error: error
        }
    }

    /// The task's members (`TransferTask.servedKeys`): those every task has, and the objects
    /// looked into.
    private static let task: [Member] = {
        let always: Set<String> = [
            "createdAt", "dataInEvents", "decisions", "id", "kind", "networkServiceType", "originalRequest", "phase",
            "preemptions", "priority", "progress", "retryCount", "schedulingClass", "sessionId", "state", "version",
        ]
        let shapes: [String: Shape] = [
            "currentRequest": .request, "originalRequest": .request, "progress": .progress, "response": .response, "error": .error,
        ]
        return TransferTask.servedKeys.map { Member($0, always.contains($0) ? .invalid : .null, shapes[$0]) }
    }()

    private static let request: [Member] = [
        Member("bodyLength", .null), Member("cachePolicy", .invalid), Member("headers", .invalid),
        Member("httpShouldHandleCookies", .invalid), Member("mainDocumentURL", .null), Member("method", .invalid),
        Member("networkServiceType", .invalid), Member("timeoutInterval", .invalid), Member("url", .invalid),
    ]

    private static let progress: [Member] = [
        Member("bytesExpectedToReceive", .null), Member("bytesExpectedToSend", .null), Member("bytesPerSecond", .invalid),
        Member("bytesReceived", .invalid), Member("bytesSent", .invalid), Member("fractionCompleted", .null),
        Member("secondsRemaining", .null),
    ]

    private static let response: [Member] = [
        Member("expectedContentLength", .null), Member("headers", .invalid), Member("mimeType", .null),
        Member("statusCode", .invalid), Member("suggestedFilename", .null), Member("textEncodingName", .null),
        Member("url", .invalid),
    ]

    private static let error: [Member] = [
        Member("code", .invalid), Member("message", .invalid), Member("name", .invalid), Member("reason", .nothing),
        Member("resumeData", .null),
    ]

    /// One pass over the record's bytes, copying them to `out` with the nulls put back.
    private struct Restorer {
        let input: UnsafeBufferPointer<UInt8>
        var at = 0
        var out: [UInt8] = []

        init(input: UnsafeBufferPointer<UInt8>) {
            self.input = input
            out.reserveCapacity(input.count + 512)
        }

        /// The object at `at`, of `shape`, copied with its missing members written as null.
        mutating func object(_ shape: Shape) -> Bool {
            guard byte(at) == UInt8(ascii: "{") else { return false }
            at += 1
            out.append(UInt8(ascii: "{"))
            var wrote = false
            for member in ServedNulls.members(of: shape) {
                guard let name = nextName(), input[name].elementsEqual(member.name) else {
                    switch member.whenAbsent {
                    case .null:
                        if wrote { out.append(UInt8(ascii: ",")) }
                        out.append(UInt8(ascii: "\""))
                        out.append(contentsOf: member.name)
                        out.append(contentsOf: "\":null".utf8)
                        wrote = true
                    case .nothing: break
                    case .invalid: return false
                    }
                    continue
                }
                if wrote { out.append(UInt8(ascii: ",")) }
                // `"name":` as it is, then the value.
                out.append(contentsOf: input[(name.lowerBound - 1)..<(name.upperBound + 2)])
                at = name.upperBound + 2
                if let child = member.shape, byte(at) == UInt8(ascii: "{") {
                    guard object(child) else { return false }
                } else {
                    guard let end = valueEnd(from: at) else { return false }
                    out.append(contentsOf: input[at..<end])
                    at = end
                }
                if byte(at) == UInt8(ascii: ",") { at += 1 }
                wrote = true
            }
            guard byte(at) == UInt8(ascii: "}") else { return false }
            at += 1
            out.append(UInt8(ascii: "}"))
            return true
        }

        /// The bytes of the name of the member at `at` (`"name":`), without consuming it; nil
        /// at the object's end. The writer's names have no escapes; a name with one matches none.
        private func nextName() -> Range<Int>? {
            guard byte(at) == UInt8(ascii: "\"") else { return nil }
            var end = at + 1
            while end < input.count, input[end] != UInt8(ascii: "\"") {
                if input[end] == UInt8(ascii: "\\") { return nil }
                end += 1
            }
            guard byte(end + 1) == UInt8(ascii: ":") else { return nil }
            return (at + 1)..<end
        }

        /// Where the value starting at `start` ends: a string, an object or array (their
        /// strings skipped whole), or a number or literal.
        private func valueEnd(from start: Int) -> Int? {
            guard let first = byte(start) else { return nil }
            switch first {
            case UInt8(ascii: "\""):
                return stringEnd(from: start)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                var index = start
                while index < input.count {
                    switch input[index] {
                    case UInt8(ascii: "\""):
                        guard let end = stringEnd(from: index) else { return nil }
                        index = end
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { return index + 1 }
                    default:
                        break
                    }
                    index += 1
                }
                return nil
            default:
                var index = start
                while index < input.count, input[index] != UInt8(ascii: ","), input[index] != UInt8(ascii: "}"),
                      input[index] != UInt8(ascii: "]") {
                    index += 1
                }
                return index > start ? index : nil
            }
        }

        /// Just past the closing quote of the string that opens at `start`.
        private func stringEnd(from start: Int) -> Int? {
            var index = start + 1
            while index < input.count {
                switch input[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""): return index + 1
                default: index += 1
                }
            }
            return nil
        }

        private func byte(_ index: Int) -> UInt8? { index < input.count ? input[index] : nil }
    }
}
