public import TransferModel

/// Which of a session's events one feed read wants: `GET /v1/sessions/{sid}/events?types=&task=`.
/// A client that waits only for completions is then neither woken nor answered by the progress
/// events in between (a download of 2,000 small files has 5 events each, 1 of them the one
/// such a client counts); a task's detail view reads only that task's events.
public struct EventFilter: Sendable, Equatable {
    /// The event types read; nil reads every type.
    public let types: Set<EventType>?
    /// The one task whose events are read; nil reads every task's (and the session's own).
    public let taskId: Int?

    public init(types: Set<EventType>? = nil, taskId: Int? = nil) {
        self.types = types.flatMap { $0.isEmpty ? nil : $0 }
        self.taskId = taskId
    }

    /// Whether `event` is read.
    func reads(_ event: TaskEvent) -> Bool {
        (types?.contains(event.type) ?? true) && (taskId.map { $0 == event.taskId } ?? true)
    }
}
