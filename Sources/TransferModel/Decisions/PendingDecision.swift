public import FoundationEssentials

/// The decision a task waits for, as its JSON shows it (`"decision"`): a client that missed the
/// event still finds the id to answer. Cleared once answered, defaulted or the task ends; a
/// restart never brings one back (the transfer that asked is gone, `TransferService.recover`).
public struct PendingDecision: Codable, Sendable, Equatable {
    /// What `POST /v1/tasks/{tid}/decisions/{decisionId}` names: random, so an answer meant for
    /// an earlier decision (or another daemon's) never lands on this one.
    public var id: String
    public var kind: DecisionKind
    /// When the default handling is taken if no answer came.
    public var deadline: Date
    /// A challenge's protection space (a credential answered for it may be kept for it).
    public var protectionSpace: ProtectionSpace?

    package init(id: String, kind: DecisionKind, deadline: Date, protectionSpace: ProtectionSpace? = nil) {
        self.id = id
        self.kind = kind
        self.deadline = deadline
        self.protectionSpace = protectionSpace
    }
}
