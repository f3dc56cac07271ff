internal import FoundationEssentials
internal import TransferModel

/// One POST to a session's webhook: the events it carries and what to send. Built by the
/// service from its feed (`TransferService+Webhooks`), posted by `WebhookLoop`.
struct WebhookDelivery: Sendable {
    let sessionId: String
    let url: String
    let secret: String
    let events: [TaskEvent]
    /// The seq of the last event carried: the delivered cursor once it succeeds.
    var through: Int { events.last?.seq ?? 0 }

    /// `{"sessionId": "...", "events": [...]}`: one event in `each` mode, a digest otherwise.
    func body() -> Data {
        (try? JSONCoding.encoder.encode(Payload(sessionId: sessionId, events: events))) ?? Data()
    }

    private struct Payload: Encodable {
        let sessionId: String
        let events: [TaskEvent]
    }
}

/// How one delivery attempt went.
enum WebhookAttemptResult: Sendable, Equatable {
    case delivered
    case failed(String)
}
