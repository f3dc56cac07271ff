internal import Glibc
public import FoundationEssentials

/// Writes a task's JSON byte for byte as `JSONCoding.encoder` writes `TransferTask` (keys sorted
/// by their UTF-8 bytes, RFC 3339 dates in UTC, slashes unescaped), without Codable's boxing.
///
/// Why: encoding a task through JSONEncoder took most of the CPU of creating one (its stored
/// record and its answer: about 20 µs each on the development machine, 66% of a batch's time).
/// The common parts (the task, its requests, its progress) are written here; the rare nested
/// values (response, error, resume state, streamed body, tus state) still go through
/// JSONCoding.encoder. `TaskJSONTests` holds the output to the Codable form, so a field added
/// to `TransferTask.encode(to:stored:)` and not here fails a test.
struct TaskJSONWriter: ~Copyable {
    var bytes: JSONBytes
    /// Where the members only the stored form has are (`storedOnly`).
    private(set) var storedOnlySpans: [Range<Int>] = []
    /// Whether a member whose value is null is left out instead of written (`null()`): a
    /// stored record holds only what a task has, and `ServedNulls` puts the nulls back when
    /// the record is served. Only members named by `key(_:)` are left out.
    var omitsNulls = false
    /// Where the last member named by `key(_:)` began (its comma included) and where its name
    /// ended, while `omitsNulls`.
    private var memberStart = -1, keyEnd = -1

    init(capacity: Int = 1024) { bytes = JSONBytes(capacity: capacity) }

    /// What was written, as Data (the writer's block, not a copy).
    consuming func data() -> Data { bytes.data() }

    /// The served form (`stored: false`) or the stored form, which adds the owner, the resume
    /// state and the streamed body segments when they are set.
    mutating func write(_ task: TransferTask, stored: Bool) {
        open()
        key("bandwidthLimit"); encoded(task.bandwidthLimit)
        key("bodyStream"); encoded(task.bodyStream)
        key("cacheStatus"); string(task.cacheStatus?.rawValue)
        key("checksum"); string(task.checksum?.description)
        key("completedAt"); date(task.completedAt)
        key("conflict"); string(task.conflict?.rawValue)
        key("createdAt"); date(task.createdAt)
        key("currentRequest"); request(task.currentRequest)
        key("dataInEvents"); raw(task.dataInEvents ? "true" : "false")
        key("decision"); encoded(task.decision)
        key("decisions")  // every task has a set: through JSONEncoder it was 4% of a POST's CPU
        if task.decisions.isEmpty { raw("[]") } else { list(task.decisions.kinds) { $0.string($1.rawValue) } }
        key("description"); string(task.description)
        key("destination"); string(task.destination)
        key("digest"); digest(task.digest)
        key("earliestBeginDate"); date(task.earliestBeginDate)
        key("error"); error(task.error)
        key("id"); integer(task.id)
        key("kind"); string(task.kind.rawValue)
        key("location"); string(task.location)
        key("mirrors"); encoded(task.mirrors)
        key("networkServiceType"); string(task.networkServiceType.rawValue)
        key("originalRequest"); request(task.originalRequest)
        if stored, let owner = task.owner { storedOnly { $0.key("owner"); $0.string(owner) } }
        key("phase"); string(task.phase.rawValue)
        key("preemptions"); integer(task.preemptions)
        key("priority"); number(task.priority.value)
        key("progress"); progress(task.progress)
        key("response"); response(task.response)
        key("responseDisposition"); encoded(task.responseDisposition)
        key("resumable"); encoded(task.resumable)
        if stored, let resume = task.resume { storedOnly { $0.key("resume"); $0.encoded(resume) } }
        key("retryCount"); integer(task.retryCount)
        key("schedulingClass"); string(task.schedulingClass.rawValue)
        if stored, let sealed = task.sealedLogin { storedOnly { $0.key("sealedLogin"); $0.string(sealed) } }
        key("segments"); if let segments = task.segments { integer(segments) } else { null() }
        key("sessionId"); string(task.sessionId)
        key("startedAt"); date(task.startedAt)
        key("state"); string(task.state.rawValue)
        if stored, let segments = task.streamedBody { storedOnly { $0.key("streamedBody"); $0.encoded(segments) } }
        key("version"); integer(task.version)
        close()
    }

    /// Writes a member only the stored form has, noting where its bytes are (comma included),
    /// so the served form can be cut out of the record without reading it (`servedCut`).
    private mutating func storedOnly(_ member: (inout TaskJSONWriter) -> Void) {
        let start = bytes.count
        member(&self)
        storedOnlySpans.append(start..<bytes.count)
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append($0) }
    }

    // MARK: the parts of a task

    private mutating func request(_ info: RequestInfo?) {
        guard let info else { return null() }
        open()
        key("bodyLength"); integerOrNull(info.bodyLength)
        key("cachePolicy"); string(info.cachePolicy.rawValue)
        key("headers"); strings(info.headers)
        key("httpShouldHandleCookies"); raw(info.httpShouldHandleCookies ? "true" : "false")
        key("mainDocumentURL"); string(info.mainDocumentURL)
        key("method"); string(info.method)
        key("networkServiceType"); string(info.networkServiceType.rawValue)
        key("timeoutInterval"); number(info.timeoutInterval)
        key("url"); string(info.url)
        close()
    }

    private mutating func progress(_ progress: TaskProgress) {
        open()
        key("bytesExpectedToReceive"); integerOrNull(progress.bytesExpectedToReceive)
        key("bytesExpectedToSend"); integerOrNull(progress.bytesExpectedToSend)
        key("bytesPerSecond"); number(progress.bytesPerSecond)
        key("bytesReceived"); integer(progress.bytesReceived)
        key("bytesSent"); integer(progress.bytesSent)
        key("fractionCompleted"); progress.fractionCompleted.map { number($0) } ?? null()
        key("secondsRemaining"); progress.secondsRemaining.map { number($0) } ?? null()
        close()
    }

    /// `{"md5":"...","sha-256":"..."}`: names and lowercase hex, which need no escapes.
    private mutating func digest(_ digest: TaskDigest?) {
        guard let digest else { return null() }
        strings(digest.values)
    }

    // MARK: JSON values

    mutating func open() { bytes.append(UInt8(ascii: "{")) }
    mutating func close() { bytes.append(UInt8(ascii: "}")) }

    /// `"name":`, after a comma unless it is the object's first key. The names written here
    /// are literals that need no escapes, so their bytes are copied as they are (a task has
    /// about 40 keys: scanning each as a string was a third of the writer's time), the whole
    /// `,"name":` at once (`JSONBytes.appendKey`).
    mutating func key(_ name: StaticString) {
        if omitsNulls { memberStart = bytes.count }
        name.withUTF8Buffer { bytes.appendKey($0) }
        if omitsNulls { keyEnd = bytes.count }
    }

    /// A null value: written, or with `omitsNulls` its whole member taken back when the null
    /// is the value of the member `key(_:)` just named.
    mutating func null() {
        guard omitsNulls, keyEnd == bytes.count else { return raw("null") }
        bytes.truncate(to: memberStart)
        keyEnd = -1
    }

    /// `key` for a name only known at run time (an event's fields, a header), escaped if it must be.
    mutating func key(named name: String) {
        if bytes.last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func string(_ text: String?) {
        guard var text else { return null() }
        let plain = text.withUTF8 { utf8 in
            // Quotes, backslashes and control characters need escapes: JSONEncoder writes those.
            guard !Self.needsEscapes(utf8) else { return false }
            bytes.appendQuoted(utf8)
            return true
        }
        if !plain { escaped(text) }
    }

    /// Whether `utf8` holds a quote, a backslash or a control character. Eight bytes at a time
    /// (a word's bytes tested together: below 0x20, or equal to either): byte by byte this was
    /// the store writer's largest function of its own (callgrind, 16 KiB downloads). A word that
    /// tests positive only sends the string through `escaped`, which checks each byte again.
    static func needsEscapes(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        if let base = UnsafeRawPointer(utf8.baseAddress) {
            while index + 8 <= utf8.count {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
                let control = (word &- ones &* 0x20) & ~word
                let zeroQuote = (quote &- ones) & ~quote, zeroBackslash = (backslash &- ones) & ~backslash
                if (control | zeroQuote | zeroBackslash) & highs != 0 { return true }
                index += 8
            }
        }
        while index < utf8.count {
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            index += 1
        }
        return false
    }

    /// A string with quotes, backslashes or control characters, escaped as JSONCoding.encoder
    /// escapes them (`TaskJSONTests` compares every ASCII character): an ETag's quotes sent
    /// each event and record with one through JSONEncoder.
    private mutating func escaped(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case 0x08: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "f"))
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case ..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0x0f))
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Decimal digits written in place (as `String(value)` has them), without making a string.
    mutating func integer(_ value: Int) {
        if value < 0 {
            guard value != .min else { return bytes.append(contentsOf: String(value).utf8) }
            bytes.append(UInt8(ascii: "-"))
        }
        var rest = value.magnitude
        var divisor: UInt = 1
        while divisor <= rest / 10 { divisor *= 10 }
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        } while divisor > 0
    }

    /// As JSONEncoder writes a Double: its description, without a trailing ".0". A whole number
    /// below 10^15 is that description's digits (an integer's); -0 keeps its sign ("-0").
    mutating func number(_ value: Double) {
        if value.rounded(.towardZero) == value, value.magnitude < 1e15, value != 0 || value.sign == .plus {
            return integer(Int(value))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// `.iso8601`: `yyyy-MM-ddTHH:mm:ssZ` in UTC, whole seconds (the fraction dropped).
    mutating func date(_ value: Date?) {
        guard let value else { return null() }
        bytes.append(UInt8(ascii: "\""))
        guard RFC3339.append(value, milliseconds: false, to: &bytes) else {
            bytes.removeLast()
            return encoded(value)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A value JSONCoding.encoder writes (the rare and nested parts); nil is null.
    mutating func encoded(_ value: (some Encodable)?) {
        guard let value else { return null() }
        guard let data = try? JSONCoding.encoder.encode(value) else { return null() }
        bytes.append(contentsOf: data)
    }
}

extension TransferTask {
    /// The task as JSON (served, or `stored` with what only the store keeps), as
    /// `JSONCoding.encoder` would write it, several times faster (see `TaskJSONWriter`).
    public func jsonData(stored: Bool = false) -> Data {
        var writer = TaskJSONWriter()
        writer.write(self, stored: stored)
        return writer.data()
    }

    /// `{"KEY":[task,task,...]}` in the served form, e.g. a batch's answer.
    public static func jsonList(_ tasks: [TransferTask], under key: StaticString) -> Data {
        var writer = TaskJSONWriter(capacity: 64 + tasks.count * 1100)
        writer.raw("{\"")
        writer.raw(key)
        writer.raw("\":")
        writer.list(tasks) { $0.write($1, stored: false) }
        writer.raw("}")
        return writer.data()
    }
}
