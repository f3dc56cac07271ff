public import TransferModel

/// Which of a session's events one feed read wants: `GET /v1/sessions/{sid}/events?types=`. A
/// client that waits only for completions is then neither woken nor answered by the progress
/// events in between (a download of 2,000 small files has 5 events each, 1 of them the one
/// such a client counts).
public struct EventFilter: Sendable, Equatable {
    /// The event types read; nil reads every type.
    public let types: Set<EventType>?

    public init(types: Set<EventType>? = nil) {
        self.types = types.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether an event of `type` is read.
    func reads(_ type: EventType) -> Bool { types?.contains(type) ?? true }
}
