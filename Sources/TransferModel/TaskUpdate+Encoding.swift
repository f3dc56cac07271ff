/// A `PATCH /v1/tasks/{tid}` body written back as it was read (a field left out stays out, a
/// null stays null): what a cluster node passes to the node that runs the task, which decodes
/// it as its own clients' bodies.
extension TaskUpdate: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(priority, forKey: .priority)
        if let description { try c.encode(description, forKey: .description) }
        if let bandwidthLimit { try c.encode(bandwidthLimit, forKey: .bandwidthLimit) }
    }
}

extension BandwidthLimitPatch: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: BandwidthLimit.CodingKeys.self)
        if let downloadBytesPerSecond { try c.encode(downloadBytesPerSecond, forKey: .downloadBytesPerSecond) }
        if let uploadBytesPerSecond { try c.encode(uploadBytesPerSecond, forKey: .uploadBytesPerSecond) }
    }
}
