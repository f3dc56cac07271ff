public import FoundationEssentials

/// A task as a list page or the change feed serves it: held in memory, or a completed task that
/// left memory, as the served JSON of its stored record (`StoredTaskJSON`), which is put into
/// the answer as it is instead of being decoded and encoded again.
public enum ServedTask: Sendable {
    indirect case held(TransferTask)
    case stored(StoredTaskJSON)

    public var id: Int {
        switch self {
        case .held(let task): task.id
        case .stored(let stored): stored.id
        }
    }

    public var state: TaskState {
        switch self {
        case .held(let task): task.state
        case .stored(let stored): stored.state
        }
    }

    public var sessionId: String {
        switch self {
        case .held(let task): task.sessionId
        case .stored(let stored): stored.sessionId
        }
    }

    /// A completed task still held in memory: its completion may not be committed yet, so an
    /// answer that holds one waits for the commit. A stored one is committed already.
    public var isHeldCompletion: Bool {
        if case .held(let task) = self { return task.state == .completed }
        return false
    }

    /// The served JSON (`TransferTask.jsonData()` for a held one).
    public var jsonData: Data {
        switch self {
        case .held(let task): task.jsonData()
        case .stored(let stored): stored.json
        }
    }
}

/// A stored task's served JSON with the columns it is found and checked by.
public struct StoredTaskJSON: Sendable {
    public let id: Int
    public let sessionId: String
    /// The token's fingerprint (nil: anonymous), from the row's own column.
    public let owner: String?
    public let state: TaskState
    /// Exactly what `TransferTask.jsonData()` writes for the task.
    public let json: Data

    package init(id: Int, sessionId: String, owner: String?, state: TaskState, json: Data) {
        self.id = id
        self.sessionId = sessionId
        self.owner = owner
        self.state = state
        self.json = json
    }

    public func isVisible(to requester: String?) -> Bool { owner == nil || owner == requester }
}

extension ServedTask: Encodable {
    /// The Codable form, the reference `TaskJSONWriter`'s pages are tested against; answers are
    /// written by the writer, which puts a stored task's JSON in as it is.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .held(let task): try task.encode(to: encoder)
        case .stored(let stored): try JSONCoding.decoder.decode(TransferTask.self, from: stored.json).encode(to: encoder)
        }
    }
}
