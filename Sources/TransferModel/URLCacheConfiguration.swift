internal import FoundationEssentials

/// URLSessionConfiguration.urlCache as JSON: the capacities of the cache a session uses, or null
/// for none. What a session gets depends on its kind (resolved when it is created, see
/// `URLCaches.resolve`): default sessions share one persistent cache (URLCache.shared) whose
/// capacities are the daemon's; an ephemeral session has a private memory-only cache (disk 0);
/// a background session has none.
public struct URLCacheConfiguration: Codable, Sendable, Equatable {
    /// Bytes of response bodies kept in memory.
    public var memoryCapacity: Int
    /// Bytes of response bodies kept on disk, under `<data>/cache/`.
    public var diskCapacity: Int

    /// The largest capacity accepted (1 TiB).
    static let maxCapacity = 1 << 40

    /// A capacity the client left out: the kind's default fills it in at creation.
    package static let unset = -1

    /// `urlCache` absent from a configuration: the default cache of the session's kind.
    public static let automatic = URLCacheConfiguration(memoryCapacity: unset, diskCapacity: unset)

    public init(memoryCapacity: Int, diskCapacity: Int) {
        self.memoryCapacity = memoryCapacity
        self.diskCapacity = diskCapacity
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case memoryCapacity, diskCapacity }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        memoryCapacity = try Self.capacity(c, .memoryCapacity, decoder) ?? Self.unset
        diskCapacity = try Self.capacity(c, .diskCapacity, decoder) ?? Self.unset
    }

    /// Only the capacities that are set: `.automatic` is `{}`, which reads back as itself (a
    /// configuration the service has not resolved yet, as a bare `Store` test writes it).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if memoryCapacity != Self.unset { try c.encode(memoryCapacity, forKey: .memoryCapacity) }
        if diskCapacity != Self.unset { try c.encode(diskCapacity, forKey: .diskCapacity) }
    }

    /// A byte count from 0 to 1 TiB, decoded as a number first (2.5 must name its field).
    private static func capacity(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, _ decoder: any Decoder) throws -> Int? {
        guard let number = try c.decodeOmittable(Double.self, forKey: key) else { return nil }
        guard number.rounded() == number, (0...Double(maxCapacity)).contains(number) else {
            throw InputError.invalidValue(field: decoder.path(key), message: "must be a whole number of bytes from 0 to \(maxCapacity)")
        }
        return Int(number)
    }
}
