internal import FoundationEssentials

extension Session {
    /// Decodes a stored or served session; fields added after a record was written take their
    /// defaults (records of earlier versions lack `acknowledgedEventSeq` and `webhook`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id),
            kind: try c.decode(SessionKind.self, forKey: .kind),
            identifier: try c.decodeIfPresent(String.self, forKey: .identifier),
            description: try c.decodeIfPresent(String.self, forKey: .description),
            state: try c.decode(SessionState.self, forKey: .state),
            configuration: try c.decode(SessionConfiguration.self, forKey: .configuration),
            createdAt: try c.decode(Date.self, forKey: .createdAt),
            invalidatedAt: try c.decodeIfPresent(Date.self, forKey: .invalidatedAt),
            version: try c.decode(Int.self, forKey: .version),
            acknowledgedEventSeq: try c.decodeIfPresent(Int.self, forKey: .acknowledgedEventSeq) ?? 0,
            webhook: try c.decodeIfPresent(WebhookStatus.self, forKey: .webhook))
    }
}
