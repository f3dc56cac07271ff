internal import Glibc
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
        var out = JSONBytes(capacity: lean.count + 640)
        let restored = lean.withUnsafeBytes { raw -> Bool in
            var restorer = Restorer(input: raw.bindMemory(to: UInt8.self))
            return restorer.object(.task, into: &out) && restorer.at == raw.count
        }
        return restored ? out.data() : nil
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

    /// A member's name, what its absence means, and the object its value is when that object
    /// may lack members too. Names are literals: a table of them costs no reference counting.
    struct Member {
        let name: StaticString
        let whenAbsent: Absence
        let shape: Shape?

        init(_ name: StaticString, _ whenAbsent: Absence, _ shape: Shape? = nil) {
            self.name = name
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

    /// The task's members, `TransferTask.servedKeys` (`TaskPageJSONTests` holds the two lists
    /// together).
    static let task: [Member] = [
        Member("bandwidthLimit", .null), Member("bodyStream", .null), Member("cacheStatus", .null),
        Member("checksum", .null), Member("completedAt", .null), Member("conflict", .null),
        Member("createdAt", .invalid), Member("currentRequest", .null, .request), Member("dataInEvents", .invalid),
        Member("decision", .null), Member("decisions", .invalid), Member("description", .null),
        Member("destination", .null), Member("digest", .null), Member("earliestBeginDate", .null),
        Member("error", .null, .error), Member("id", .invalid), Member("kind", .invalid), Member("location", .null),
        Member("mirrors", .null), Member("networkServiceType", .invalid), Member("originalRequest", .invalid, .request),
        Member("phase", .invalid), Member("preemptions", .invalid), Member("priority", .invalid),
        Member("progress", .invalid, .progress), Member("response", .null, .response), Member("responseDisposition", .null),
        Member("resumable", .null), Member("retryCount", .invalid), Member("schedulingClass", .invalid),
        Member("segments", .null), Member("sessionId", .invalid), Member("startedAt", .null), Member("state", .invalid),
        Member("version", .invalid),
    ]

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

    /// One pass over the record's bytes, copying them with the nulls put back.
    private struct Restorer {
        let input: UnsafeBufferPointer<UInt8>
        var at = 0

        init(input: UnsafeBufferPointer<UInt8>) { self.input = input }

        /// The object at `at`, of `shape`, copied with its missing members written as null.
        /// The bytes between insertions are copied in runs; only the names are compared.
        mutating func object(_ shape: Shape, into out: inout JSONBytes) -> Bool {
            guard byte(at) == UInt8(ascii: "{") else { return false }
            var run = at  // the first byte not copied yet
            at += 1
            var name = nextName()
            for member in ServedNulls.members(of: shape) {
                guard let present = name, matches(present, member.name) else {
                    switch member.whenAbsent {
                    case .null:
                        copy(from: run, into: &out)
                        run = at
                        // Before the next member, or at the object's end (after another member or not).
                        if byte(at) == UInt8(ascii: "\"") {
                            out.append(UInt8(ascii: "\""))
                            member.name.withUTF8Buffer { out.append($0) }
                            ("\":null," as StaticString).withUTF8Buffer { out.append($0) }
                        } else {
                            member.name.withUTF8Buffer { out.appendKey($0) }
                            ("null" as StaticString).withUTF8Buffer { out.append($0) }
                        }
                    case .nothing: break
                    case .invalid: return false
                    }
                    continue
                }
                at = present.upperBound + 2
                if let child = member.shape, byte(at) == UInt8(ascii: "{") {
                    copy(from: run, into: &out)
                    guard object(child, into: &out) else { return false }
                    run = at
                } else {
                    guard let end = valueEnd(from: at) else { return false }
                    at = end
                }
                if byte(at) == UInt8(ascii: ",") { at += 1 }
                name = nextName()
            }
            guard byte(at) == UInt8(ascii: "}") else { return false }
            at += 1
            copy(from: run, into: &out)
            return true
        }

        /// Copies the input from `start` up to `at`.
        private func copy(from start: Int, into out: inout JSONBytes) {
            guard start < at else { return }
            out.append(UnsafeBufferPointer(rebasing: input[start..<at]))
        }

        /// The bytes of the name of the member at `at` (`"name":`), without consuming it; nil
        /// at the object's end. The writer's names have no escapes; a name with one matches none.
        private func nextName() -> Range<Int>? {
            guard byte(at) == UInt8(ascii: "\""), let end = quote(from: at + 1),
                  byte(end + 1) == UInt8(ascii: ":") else { return nil }
            return (at + 1)..<end
        }

        /// Whether the bytes of `range` are `name`'s.
        private func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
            guard range.count == name.utf8CodeUnitCount, input[range.lowerBound] == name.utf8Start.pointee,
                  let base = input.baseAddress else { return false }
            return memcmp(base + range.lowerBound, name.utf8Start, range.count) == 0
        }

        /// The index of the first `"` at or after `start` (memchr: most of a record's bytes are
        /// inside strings), or nil.
        private func quote(from start: Int) -> Int? {
            guard start < input.count, let base = input.baseAddress,
                  let found = memchr(base + start, Int32(UInt8(ascii: "\"")), input.count - start) else { return nil }
            return UnsafeRawPointer(found) - UnsafeRawPointer(base)
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

        /// Just past the closing quote of the string that opens at `start`: the first quote not
        /// escaped (preceded by an even number of backslashes).
        private func stringEnd(from start: Int) -> Int? {
            var from = start + 1
            while let found = quote(from: from) {
                var backslashes = 0
                while found - backslashes - 1 > start, input[found - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
                if backslashes % 2 == 0 { return found + 1 }
                from = found + 1
            }
            return nil
        }

        private func byte(_ index: Int) -> UInt8? { index < input.count ? input[index] : nil }
    }
}
