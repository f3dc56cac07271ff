internal import FoundationEssentials
internal import HTTPServer
internal import TransferModel
internal import TransferService

/// What a client does to a session beside its tasks: URLSession's reset and flush, acknowledging
/// the event feed, and letting go of a background session's attachment.
enum SessionOperationRoutes {
    /// The response header of `POST /v1/sessions` that carries a background session's attachment.
    static let attachmentHeader = "Transferd-Attachment"

    static func register(_ router: inout Router, service: TransferService) {
        router.add("POST", "/v1/sessions/{sid}/reset") { request in
            _ = try request.decode(EmptyBody.self)
            return .json(try service.reset(session: request.parameter("sid"), owner: request.owner))
        }
        router.add("POST", "/v1/sessions/{sid}/flush") { request in
            _ = try request.decode(EmptyBody.self)
            return .json(try service.flush(session: request.parameter("sid"), owner: request.owner))
        }
        router.add("POST", "/v1/sessions/{sid}/events/ack") { request in
            let body = try request.decode(AcknowledgeRequest.self)
            return .json(try service.acknowledgeEvents(session: request.parameter("sid"), through: body.through, owner: request.owner))
        }
        router.add("DELETE", "/v1/sessions/{sid}/attachment") { request in
            guard let attachment = request.http.query["attachment"], !attachment.isEmpty else {
                throw APIError(400, "missing_field", "attachment (the query parameter) is required: the id POST /v1/sessions answered in \(attachmentHeader)", field: "attachment")
            }
            try service.detach(session: request.parameter("sid"), attachment: attachment, owner: request.owner)
            return .now(HTTPResponse(status: 204))
        }
    }
}

/// The body of POST /v1/sessions/{sid}/events/ack.
struct AcknowledgeRequest: Decodable {
    let through: Int
    enum CodingKeys: String, CodingKey, CaseIterable { case through }
    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let value = try decoder.container(keyedBy: CodingKeys.self).decode(Double.self, forKey: .through)
        guard value.rounded() == value, value >= 0, value < 9e15 else {
            throw InputError.invalidValue(field: "through", message: "must be an event seq: an integer of 0 or more")
        }
        through = Int(value)
    }
}

/// A body that must be empty or `{}` (reset, flush): a field there is a mistake worth reporting.
struct EmptyBody: Decodable {
    /// No key is known, so every one is reported.
    struct NoKeys: CodingKey, CaseIterable {
        static var allCases: [NoKeys] { [] }
        var stringValue: String { "" }
        var intValue: Int? { nil }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(NoKeys.self)
    }
}
