/// A task's byte counts (countOfBytes...) with the derived fraction, speed and time remaining.
public struct TaskProgress: Codable, Sendable, Equatable {
    public var bytesReceived = 0
    public var bytesExpectedToReceive: Int?
    public var bytesSent = 0
    public var bytesExpectedToSend: Int?
    public var bytesPerSecond: Double = 0

    public init() {}

    /// Received over expected, when the expected size is known.
    public var fractionCompleted: Double? {
        guard let expected = bytesExpectedToReceive, expected > 0 else { return nil }
        return min(1, Double(bytesReceived) / Double(expected))
    }

    public var secondsRemaining: Double? {
        guard let expected = bytesExpectedToReceive, bytesPerSecond > 0 else { return nil }
        return Double(max(0, expected - bytesReceived)) / bytesPerSecond
    }

    enum CodingKeys: String, CodingKey {
        case bytesReceived, bytesExpectedToReceive, bytesSent, bytesExpectedToSend
        case fractionCompleted, bytesPerSecond, secondsRemaining
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        bytesReceived = try c.decode(Int.self, forKey: .bytesReceived)
        bytesExpectedToReceive = try c.decodeIfPresent(Int.self, forKey: .bytesExpectedToReceive)
        bytesSent = try c.decode(Int.self, forKey: .bytesSent)
        bytesExpectedToSend = try c.decodeIfPresent(Int.self, forKey: .bytesExpectedToSend)
        bytesPerSecond = try c.decodeIfPresent(Double.self, forKey: .bytesPerSecond) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(bytesReceived, forKey: .bytesReceived)
        try c.encode(bytesExpectedToReceive, forKey: .bytesExpectedToReceive)
        try c.encode(bytesSent, forKey: .bytesSent)
        try c.encode(bytesExpectedToSend, forKey: .bytesExpectedToSend)
        try c.encode(fractionCompleted, forKey: .fractionCompleted)
        try c.encode(bytesPerSecond, forKey: .bytesPerSecond)
        try c.encode(secondsRemaining, forKey: .secondsRemaining)
    }
}
