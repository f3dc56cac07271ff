/// A rate limit for one direction pair, in bytes per second; nil means unlimited. A task's
/// `bandwidthLimit`, and each pair of `GET/PATCH /v1/limits`.
public struct BandwidthLimit: Codable, Sendable, Equatable {
    public var downloadBytesPerSecond: Int?
    public var uploadBytesPerSecond: Int?

    /// The largest rate accepted (1 TB/s): beyond it a limit means nothing.
    public static let maxRate = 1_000_000_000_000
    public static let unlimited = BandwidthLimit()

    public init(downloadBytesPerSecond: Int? = nil, uploadBytesPerSecond: Int? = nil) {
        self.downloadBytesPerSecond = downloadBytesPerSecond
        self.uploadBytesPerSecond = uploadBytesPerSecond
    }

    public var isUnlimited: Bool { downloadBytesPerSecond == nil && uploadBytesPerSecond == nil }

    enum CodingKeys: String, CodingKey, CaseIterable { case downloadBytesPerSecond, uploadBytesPerSecond }

    /// A missing or null field is unlimited; use `BandwidthLimitPatch` to leave fields unchanged.
    public init(from decoder: any Decoder) throws {
        let patch = try BandwidthLimitPatch(from: decoder)
        downloadBytesPerSecond = patch.downloadBytesPerSecond ?? nil
        uploadBytesPerSecond = patch.uploadBytesPerSecond ?? nil
    }

    /// Both fields always, null when unlimited.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(downloadBytesPerSecond, forKey: .downloadBytesPerSecond)
        try c.encode(uploadBytesPerSecond, forKey: .uploadBytesPerSecond)
    }
}

/// A change to a `BandwidthLimit`: a field left out stays as it is, null makes it unlimited.
public struct BandwidthLimitPatch: Decodable, Sendable, Equatable {
    public var downloadBytesPerSecond: Int??
    public var uploadBytesPerSecond: Int??

    public init(downloadBytesPerSecond: Int?? = .none, uploadBytesPerSecond: Int?? = .none) {
        self.downloadBytesPerSecond = downloadBytesPerSecond
        self.uploadBytesPerSecond = uploadBytesPerSecond
    }

    public init(from decoder: any Decoder) throws {
        typealias Keys = BandwidthLimit.CodingKeys
        try decoder.rejectUnknownKeys(Keys.self)
        try self.init(try decoder.container(keyedBy: Keys.self), decoder)
    }

    /// The two fields from an object that may hold others (the top level of PATCH /v1/limits).
    init(_ c: KeyedDecodingContainer<BandwidthLimit.CodingKeys>, _ decoder: any Decoder) throws {
        downloadBytesPerSecond = try Self.rate(c, .downloadBytesPerSecond, decoder)
        uploadBytesPerSecond = try Self.rate(c, .uploadBytesPerSecond, decoder)
    }

    public func applied(to limit: BandwidthLimit) -> BandwidthLimit {
        var result = limit
        if let downloadBytesPerSecond { result.downloadBytesPerSecond = downloadBytesPerSecond }
        if let uploadBytesPerSecond { result.uploadBytesPerSecond = uploadBytesPerSecond }
        return result
    }

    /// nil: left out; .some(nil): null; else a whole number of bytes per second, 1 to 1e12.
    private static func rate(_ c: KeyedDecodingContainer<BandwidthLimit.CodingKeys>, _ key: BandwidthLimit.CodingKeys, _ decoder: any Decoder) throws -> Int?? {
        guard c.contains(key) else { return .none }
        if try c.decodeNil(forKey: key) { return .some(nil) }
        let field = decoder.path(key)
        // Decoded as a number first, so 1.5 or 1e13 get this message rather than a parse error.
        let value = try c.decode(Double.self, forKey: key)
        guard value.isFinite, value.rounded() == value, value >= 1, value <= Double(BandwidthLimit.maxRate) else {
            throw InputError.refused(field: field, code: "invalid_rate", message: "\(field) must be a whole number of bytes per second from 1 to \(BandwidthLimit.maxRate), or null for unlimited")
        }
        return .some(Int(value))
    }
}

/// The daemon-wide limits (`GET/PATCH /v1/limits`): the global pair over every transfer, and the
/// share background-class tasks (request networkServiceType `background`) may use. A background
/// transfer's bytes count against both its own pair and the global one.
public struct BandwidthLimits: Codable, Sendable, Equatable {
    public var downloadBytesPerSecond: Int?
    public var uploadBytesPerSecond: Int?
    public var background: BandwidthLimit

    public init(global: BandwidthLimit = .unlimited, background: BandwidthLimit = .unlimited) {
        downloadBytesPerSecond = global.downloadBytesPerSecond
        uploadBytesPerSecond = global.uploadBytesPerSecond
        self.background = background
    }

    public var global: BandwidthLimit {
        get { BandwidthLimit(downloadBytesPerSecond: downloadBytesPerSecond, uploadBytesPerSecond: uploadBytesPerSecond) }
        set {
            downloadBytesPerSecond = newValue.downloadBytesPerSecond
            uploadBytesPerSecond = newValue.uploadBytesPerSecond
        }
    }

    enum CodingKeys: String, CodingKey { case downloadBytesPerSecond, uploadBytesPerSecond, background }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(downloadBytesPerSecond, forKey: .downloadBytesPerSecond)
        try c.encode(uploadBytesPerSecond, forKey: .uploadBytesPerSecond)
        try c.encode(background, forKey: .background)
    }
}

/// The body of `PATCH /v1/limits`: fields left out stay, null makes a direction unlimited.
public struct BandwidthLimitsPatch: Decodable, Sendable {
    public var global: BandwidthLimitPatch
    public var background: BandwidthLimitPatch?

    public init(global: BandwidthLimitPatch = BandwidthLimitPatch(), background: BandwidthLimitPatch? = nil) {
        self.global = global
        self.background = background
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case downloadBytesPerSecond, uploadBytesPerSecond, background }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // The global pair's two fields sit at the top level, next to `background`.
        global = try BandwidthLimitPatch(try decoder.container(keyedBy: BandwidthLimit.CodingKeys.self), decoder)
        if c.contains(.background) {
            if try c.decodeNil(forKey: .background) {
                background = BandwidthLimitPatch(downloadBytesPerSecond: .some(nil), uploadBytesPerSecond: .some(nil))
            } else {
                background = try c.decode(BandwidthLimitPatch.self, forKey: .background)
            }
        }
    }

    public func applied(to limits: BandwidthLimits) -> BandwidthLimits {
        var result = limits
        result.global = global.applied(to: limits.global)
        if let background { result.background = background.applied(to: limits.background) }
        return result
    }
}
