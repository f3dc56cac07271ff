/// A data task's answer to its response, declared when the task is created: URLSession's
/// `didReceiveResponse` completion handler, decided by rules instead of asked live (docs/tasks.md,
/// "Response disposition", says why). The first rule whose conditions all hold gives the action, else `default`.
/// Owned by the task record (stored with it); evaluated by the engine at the final response.
public struct ResponseDisposition: Codable, Sendable, Equatable {
    /// URLSession.ResponseDisposition without `becomeStream`, which only a live decision gives
    /// (docs/decisions.md): a declared rule has no client reading the stream it would make.
    public enum Action: String, Codable, Sendable {
        /// Go on as a data task.
        case allow
        /// End the task now with cancelled (-999); no body is read.
        case cancel
        /// The body goes to a download file from here on: the same task id goes on as a download.
        case becomeDownload
    }

    /// What a rule looks at; every condition given must hold (at least one is given).
    public struct Condition: Codable, Sendable, Equatable {
        /// Matches a declared length (Content-Length) of at least this many bytes; a response
        /// of unknown length (chunked, close-delimited) never matches.
        public var minLength: Int?
        /// `type/subtype`, `type/*` or `*/*`, compared without case and without parameters.
        public var mimeType: String?
        /// Matches these HTTP status codes (data: and file: responses have status 0: never).
        public var statusCodes: [Int]?

        public init(minLength: Int? = nil, mimeType: String? = nil, statusCodes: [Int]? = nil) {
            self.minLength = minLength
            self.mimeType = mimeType
            self.statusCodes = statusCodes
        }
    }

    /// One `when` → `then` pair.
    public struct Rule: Codable, Sendable, Equatable {
        public var when: Condition
        public var then: Action

        public init(when: Condition, then: Action) {
            self.when = when
            self.then = then
        }
    }

    public var `default`: Action
    public var rules: [Rule]

    /// The most rules one task may declare.
    public static let maxRules = 16

    public init(default: Action = .allow, rules: [Rule] = []) {
        self.default = `default`
        self.rules = rules
    }

    /// How a task its disposition cancels ends (URLSession: NSURLErrorCancelled).
    package static let cancelled = TaskError(.cancelled, "cancelled: the task's responseDisposition answered this response with cancel")

    /// The action for a response: the first matching rule's, else the default.
    public func action(statusCode: Int, mimeType: String?, expectedLength: Int?) -> Action {
        rules.first { $0.when.matches(statusCode: statusCode, mimeType: mimeType, expectedLength: expectedLength) }?.then ?? `default`
    }

    /// Whether some response could turn the task into a download (the engine then needs a target).
    public var mayBecomeDownload: Bool {
        `default` == .becomeDownload || rules.contains { $0.then == .becomeDownload }
    }
}

extension ResponseDisposition.Condition {
    func matches(statusCode: Int, mimeType: String?, expectedLength: Int?) -> Bool {
        if let minLength {
            guard let expectedLength, expectedLength >= minLength else { return false }
        }
        if let statusCodes, !statusCodes.contains(statusCode) { return false }
        if let pattern = self.mimeType {
            guard let mimeType, Self.mediaType(mimeType, matches: pattern) else { return false }
        }
        return true
    }

    /// `video/mp4; codecs=x` matches `video/mp4`, `video/*` and `*/*`.
    static func mediaType(_ value: String, matches pattern: String) -> Bool {
        let essence = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmed().lowercased() } ?? ""
        let pattern = pattern.lowercased()
        if pattern == "*/*" { return !essence.isEmpty }
        if pattern.hasSuffix("/*") { return essence.hasPrefix(pattern.dropLast()) }
        return essence == pattern
    }
}
