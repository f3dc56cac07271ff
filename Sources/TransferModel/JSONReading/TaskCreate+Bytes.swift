public import FoundationEssentials

/// `POST /v1/sessions/{sid}/tasks` read straight from the body's bytes (`JSONByteReader`) when
/// it has the shape bulk clients send: `kind`, `request` (`url`, `method`, `headers`, a `text`,
/// `base64`, `blob` or `file` body, `cachePolicy`, `timeoutInterval`, `networkServiceType`,
/// `allowsCellularAccess`, `httpShouldHandleCookies`, `mainDocumentURL`), `priority`,
/// `description`, `state`, `destination`, `conflict`.
///
/// The rule that keeps it exact: it returns a value only when `init(from:)` would return the
/// same one. Any other field, any `null` where a value must be, any value the checks below
/// would refuse, any duplicate key: nil, and the caller decodes with `JSONCoding.decoder`,
/// which gives the value or the error (with its field) as it always did. So errors are never
/// made here, and the checks it runs are the shared ones (`Validate`, `RequestURL`).
extension TaskCreate {
    /// The create request in `body`, or nil when the body is not one this reader is sure of.
    public static func read(json body: Data) -> TaskCreate? {
        body.withUnsafeBytes { raw in
            var reader = JSONByteReader(raw)
            guard let task = try? read(&reader), (try? reader.end()) != nil else { return nil }
            return task
        }
    }

    /// One create request at the reader's position (an element of a batch, or a whole body).
    static func read(_ reader: inout JSONByteReader) throws(JSONByteReader.Unread) -> TaskCreate {
        var kind: TaskKind?
        var request: RequestSpec?
        var priority = TaskPriority.default
        var description: String?
        var state = TaskState.running
        var destination: String?
        var conflict: DownloadConflict?
        var seen = SeenKeys()
        try reader.beginObject()
        var first = true
        while let key = try reader.nextKey(&first) {
            if JSONByteReader.key(key, is: "kind") {
                try seen.insert(0)
                kind = try reader.named(TaskKind.self)
            } else if JSONByteReader.key(key, is: "request") {
                try seen.insert(1)
                request = try RequestSpec.read(&reader)
            } else if JSONByteReader.key(key, is: "priority") {
                try seen.insert(2)
                priority = try TaskPriority.read(&reader)
            } else if JSONByteReader.key(key, is: "description") {
                try seen.insert(3)
                description = reader.null() ? nil : try reader.string()
            } else if JSONByteReader.key(key, is: "state") {
                try seen.insert(4)
                state = try reader.named(TaskState.self)
            } else if JSONByteReader.key(key, is: "destination") {
                try seen.insert(5)
                destination = try reader.string()
            } else if JSONByteReader.key(key, is: "conflict") {
                try seen.insert(6)
                conflict = try reader.named(DownloadConflict.self)
            } else {
                throw JSONByteReader.Unread()
            }
        }
        // The checks of `init(from:)` that apply to these fields; a stream task takes others.
        guard let kind, kind != .stream, let request,
              state == .running || state == .suspended,
              kind != .upload || request.body != nil,
              kind == .download || (destination == nil && conflict == nil),
              (description?.count ?? 0) <= 1000 else {
            throw JSONByteReader.Unread()
        }
        var task = TaskCreate(kind: kind, request: request, priority: priority, description: description, state: state)
        task.destination = destination
        task.conflict = conflict
        return task
    }
}

extension RequestSpec {
    /// A `request` object (see `TaskCreate.read`); its checks are `init(from:)`'s.
    static func read(_ reader: inout JSONByteReader) throws(JSONByteReader.Unread) -> RequestSpec {
        var url: String?
        var method = "GET"
        var headers: [String: String] = [:]
        var body: RequestBody?
        var cachePolicy: CachePolicy?
        var timeoutInterval: Double?
        var networkServiceType: NetworkServiceType?
        var handlesCookies = true
        var mainDocumentURL: String?
        var seen = SeenKeys()
        try reader.beginObject()
        var first = true
        while let key = try reader.nextKey(&first) {
            if JSONByteReader.key(key, is: "url") {
                try seen.insert(0)
                url = try reader.string()
            } else if JSONByteReader.key(key, is: "method") {
                try seen.insert(1)
                method = try reader.string()
            } else if JSONByteReader.key(key, is: "headers") {
                try seen.insert(2)
                headers = try readHeaders(&reader)
            } else if JSONByteReader.key(key, is: "body") {
                try seen.insert(3)
                body = try RequestBody.read(&reader)
            } else if JSONByteReader.key(key, is: "cachePolicy") {
                try seen.insert(4)
                cachePolicy = try reader.named(CachePolicy.self)
            } else if JSONByteReader.key(key, is: "timeoutInterval") {
                try seen.insert(5)
                timeoutInterval = try reader.number()
            } else if JSONByteReader.key(key, is: "networkServiceType") {
                try seen.insert(6)
                networkServiceType = try reader.named(NetworkServiceType.self)
            } else if JSONByteReader.key(key, is: "allowsCellularAccess") {
                try seen.insert(7)
                _ = try reader.bool()
            } else if JSONByteReader.key(key, is: "httpShouldHandleCookies") {
                try seen.insert(8)
                handlesCookies = try reader.bool()
            } else if JSONByteReader.key(key, is: "mainDocumentURL") {
                try seen.insert(9)
                mainDocumentURL = try reader.string()
            } else {
                throw JSONByteReader.Unread()
            }
        }
        guard let url, Validate.isToken(method) else { throw JSONByteReader.Unread() }
        do {
            for (name, value) in headers { try Validate.header(name: name, value: value, "") }
            if let timeoutInterval { try Validate.interval(timeoutInterval, "") }
            try RequestURL.check(url, field: "")
            if let mainDocumentURL { try RequestURL.check(mainDocumentURL, field: "") }
        } catch {
            throw JSONByteReader.Unread()
        }
        var spec = RequestSpec(url: url, method: method, headers: headers, body: body)
        spec.cachePolicy = cachePolicy
        spec.timeoutInterval = timeoutInterval
        spec.networkServiceType = networkServiceType
        spec.httpShouldHandleCookies = handlesCookies
        spec.mainDocumentURL = mainDocumentURL
        return spec
    }

    /// `headers`: string values only; a name twice (as Swift compares strings) is left to the
    /// reference decoder.
    private static func readHeaders(_ reader: inout JSONByteReader) throws(JSONByteReader.Unread) -> [String: String] {
        var headers: [String: String] = [:]
        try reader.beginObject()
        var first = true
        while let key = try reader.nextKey(&first) {
            let name = String(decoding: key, as: UTF8.self)
            guard headers.updateValue(try reader.string(), forKey: name) == nil else { throw JSONByteReader.Unread() }
        }
        return headers
    }
}

extension RequestBody {
    /// A `body` of one of the string forms (`text`, `base64`, `blob`, `file`).
    static func read(_ reader: inout JSONByteReader) throws(JSONByteReader.Unread) -> RequestBody {
        try reader.beginObject()
        var first = true
        guard let key = try reader.nextKey(&first) else { throw JSONByteReader.Unread() }
        let body: RequestBody
        if JSONByteReader.key(key, is: "text") {
            body = .text(try reader.string())
        } else if JSONByteReader.key(key, is: "base64") {
            guard let data = Base64Input.decode(try reader.string()) else { throw JSONByteReader.Unread() }
            body = .base64(data)
        } else if JSONByteReader.key(key, is: "blob") {
            body = .blob(try reader.string())
        } else if JSONByteReader.key(key, is: "file") {
            body = .file(try reader.string())
        } else {
            throw JSONByteReader.Unread()
        }
        // Exactly one form.
        guard try reader.nextKey(&first) == nil else { throw JSONByteReader.Unread() }
        return body
    }
}

extension TaskPriority {
    /// A name (`low`, `default`, `high`) or a number from 0 to 1.
    static func read(_ reader: inout JSONByteReader) throws(JSONByteReader.Unread) -> TaskPriority {
        var probe = reader
        if let name = try? probe.string() {
            reader = probe
            switch name {
            case "low": return .low
            case "default": return .default
            case "high": return .high
            default: throw JSONByteReader.Unread()
            }
        }
        let value = try reader.number()
        guard value.isFinite, (0...1).contains(value) else { throw JSONByteReader.Unread() }
        return TaskPriority(value: value)
    }
}

/// Which of an object's known keys were read, so that a key given twice (whose meaning
/// decoders differ on) is left to the reference decoder.
struct SeenKeys {
    private var bits: UInt32 = 0

    mutating func insert(_ index: Int) throws(JSONByteReader.Unread) {
        let bit = UInt32(1) << UInt32(index)
        guard bits & bit == 0 else { throw JSONByteReader.Unread() }
        bits |= bit
    }
}
