/// One range of addresses in CIDR notation, as `--deny-networks` and `--allow-networks` take
/// them: `10.0.0.0/8`, `fc00::/7`, or one address (`169.254.169.254`, `::1`: all its bits).
/// IPv4 is dotted decimal only (inet_pton: no octal, hex or shortened forms). Bits past the
/// prefix are ignored (`10.1.2.3/8` is `10.0.0.0/8`). An IPv4-mapped IPv6 range
/// (`::ffff:10.0.0.0/104`) is the IPv4 range it maps (`10.0.0.0/8`), as addresses are judged
/// unmapped (`NetworkPolicy`).
public struct NetworkRange: Sendable, Equatable, CustomStringConvertible {
    let network: IPAddress
    let prefixLength: Int

    /// Why a range does not parse, naming the text.
    public struct Malformed: Error, Equatable, CustomStringConvertible {
        public let text: String
        public var description: String {
            "\"\(text)\" is not an address range: write ADDRESS/PREFIX (10.0.0.0/8, fc00::/7) or one address (169.254.169.254, ::1)"
        }
    }

    public init(_ text: String) throws(Malformed) {
        let trimmed = text.trimmed()
        let parts = trimmed.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])), !parts[0].hasPrefix("[") else { throw Malformed(text: text) }
        let bits = address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber),
                  let value = Int(parts[1]), (0...bits).contains(value) else { throw Malformed(text: text) }
            length = value
        }
        let unmapped = address.unmapped
        if unmapped.bytes.count == 4 && bits == 128 && length >= 96 {
            self.init(network: unmapped, prefixLength: length - 96)
        } else {
            self.init(network: address, prefixLength: length)
        }
    }

    init(network: IPAddress, prefixLength: Int) {
        self.network = network.masked(to: prefixLength)
        self.prefixLength = prefixLength
    }

    /// Ranges separated by commas (spaces around them allowed, empty items skipped), as one
    /// flag or environment variable gives them.
    public static func list(_ text: String) throws(Malformed) -> [NetworkRange] {
        var ranges: [NetworkRange] = []
        for item in text.split(separator: ",") where !item.trimmed().isEmpty {
            ranges.append(try NetworkRange(String(item)))
        }
        return ranges
    }

    /// Whether `address` (of either family) is in the range; an address of the other family never is.
    func contains(_ address: IPAddress) -> Bool {
        address.isIn(network, prefixLength: prefixLength)
    }

    /// "10.0.0.0/8", "fc00::/7".
    public var description: String { "\(network)/\(prefixLength)" }
}
