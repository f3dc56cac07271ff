/// The delegate callbacks a client may decide live, as URLSession's completion handlers do
/// (`"decisions"` on a task, or its session's configuration as the default): at such a point the
/// task waits for `POST /v1/tasks/{tid}/decisions/{decisionId}` (docs/decisions.md).
public enum DecisionKind: String, Codable, Sendable, CaseIterable, Comparable {
    /// willPerformHTTPRedirection: follow, refuse or rewrite a redirect.
    case redirect
    /// didReceiveChallenge: answer a 401 with a credential, the default handling, or not at all.
    case challenge
    /// didReceiveResponse (data tasks): allow, cancel, becomeDownload, becomeStream.
    case response
    /// willCacheResponse (data tasks): store, storeInMemoryOnly, doNotStore.
    case cache

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// Whether a task of `kind` reaches this callback at all.
    public func applies(to kind: TaskKind) -> Bool {
        switch self {
        case .redirect, .challenge: kind == .data || kind == .download || kind == .upload
        case .response, .cache: kind == .data
        }
    }

    /// A `decisions` list: known names, no repeats, sorted (so equal lists compare equal).
    static func decodeList(_ names: [String], field: String) throws -> [DecisionKind] {
        var kinds: Set<DecisionKind> = []
        for name in names {
            guard let kind = DecisionKind(rawValue: name) else {
                throw InputError.invalidValue(field: field, message: "must list some of redirect, challenge, response, cache")
            }
            guard kinds.insert(kind).inserted else {
                throw InputError.invalidValue(field: field, message: "names \(name) twice")
            }
        }
        return kinds.sorted()
    }
}

/// A set of `DecisionKind`s in one byte (a task's `decisions`: it sits in what would be padding
/// of the task record, so a queued task costs nothing more). Its JSON is the sorted names.
public struct DecisionSet: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public init(_ kinds: some Sequence<DecisionKind>) {
        self.init(rawValue: kinds.reduce(0) { $0 | Self.bit($1) })
    }

    private static func bit(_ kind: DecisionKind) -> UInt8 {
        switch kind {
        case .redirect: 1
        case .challenge: 2
        case .response: 4
        case .cache: 8
        }
    }

    public func contains(_ kind: DecisionKind) -> Bool { rawValue & Self.bit(kind) != 0 }

    /// The kinds in the set, sorted by name.
    public var kinds: [DecisionKind] { DecisionKind.allCases.filter(contains).sorted() }

    public init(from decoder: any Decoder) throws {
        let names = try decoder.singleValueContainer().decode([String].self)
        self.init(try DecisionKind.decodeList(names, field: decoder.codingPath.map(\.stringValue).joined(separator: ".")))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(kinds.map(\.rawValue))
    }
}
