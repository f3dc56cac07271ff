/// A digest algorithm a checksum may name, spelled as aria2 spells it (`--checksum=sha-256=...`),
/// which for the SHA-2 ones is also their name in the RFC 9530 registry. Weakest first: the
/// order "the strongest one" is taken by.
public enum DigestAlgorithm: String, Codable, Sendable, CaseIterable, Comparable {
    case md5 = "md5"
    case sha1 = "sha-1"
    case sha256 = "sha-256"
    case sha384 = "sha-384"
    case sha512 = "sha-512"

    /// The digest's size in bytes (twice that in hex digits).
    public var byteCount: Int {
        switch self {
        case .md5: 16
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// By name, case-insensitively (aria2's `sha-256`, also `SHA-256` as RFC 3230 writes it).
    init?(name: some StringProtocol) {
        self.init(rawValue: name.lowercased())
    }

    public static func < (a: DigestAlgorithm, b: DigestAlgorithm) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// The digest a task's bytes must have: `"checksum": "sha-256=<hex>"` on a download or data task,
/// stored with the task (and in its resume data), served back in the same form. The hex is kept
/// in lowercase; the input may use either case.
public struct Checksum: Sendable, Equatable, Codable, CustomStringConvertible {
    public let algorithm: DigestAlgorithm
    /// Lowercase hex, `algorithm.byteCount * 2` digits.
    public let hex: String

    public init(algorithm: DigestAlgorithm, hex: String) {
        self.algorithm = algorithm
        self.hex = hex.lowercased()
    }

    /// `ALGORITHM=HEX`, as the client wrote it; throws `InputError.invalidValue` for `field`.
    public init(parsing text: String, field: String) throws(InputError) {
        let names = DigestAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")
        guard let equals = text.firstIndex(of: "="),
              let algorithm = DigestAlgorithm(name: text[..<equals].trimmed()) else {
            throw InputError.invalidValue(field: field, message: "must be ALGORITHM=HEX with ALGORITHM one of \(names) (aria2's spelling), e.g. sha-256=<64 hex digits>")
        }
        let hex = text[text.index(after: equals)...].trimmed()
        guard hex.count == algorithm.byteCount * 2, hex.utf8.allSatisfy(Self.isHexDigit) else {
            throw InputError.invalidValue(field: field, message: "\(algorithm.rawValue) needs \(algorithm.byteCount * 2) hex digits after the \"=\"")
        }
        self.init(algorithm: algorithm, hex: hex)
    }

    public var description: String { "\(algorithm.rawValue)=\(hex)" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(parsing: text, field: fieldPath(decoder.codingPath))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}

/// What a completed task's bytes hashed to, by algorithm name: always `sha-256`, plus the
/// algorithm its checksum or its server's digest header named. Served as
/// `"digest": {"sha-256": "<hex>"}`.
public struct TaskDigest: Sendable, Equatable, Codable {
    /// Algorithm name (`DigestAlgorithm.rawValue`) to lowercase hex.
    public var values: [String: String]

    public init(values: [String: String] = [:]) { self.values = values }

    public subscript(algorithm: DigestAlgorithm) -> String? { values[algorithm.rawValue] }

    /// The error a task fails with when `expected` is not what its bytes hashed to; `source`
    /// says who asked for it ("the task's checksum", "the server's Repr-Digest").
    public func mismatch(_ expected: Checksum, source: String) -> TaskError? {
        let got = self[expected.algorithm]
        guard got != expected.hex else { return nil }
        return TaskError(.badServerResponse, "checksum mismatch: expected \(expected) (\(source)) got \(got.map { "\(expected.algorithm.rawValue)=\($0)" } ?? "no \(expected.algorithm.rawValue) digest")")
    }

    public init(from decoder: any Decoder) throws {
        values = try decoder.singleValueContainer().decode([String: String].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}
