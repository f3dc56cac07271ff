internal import Glibc

/// An IPv4 or IPv6 address as its bytes (4 or 16), parsed with inet_pton; brackets around an
/// IPv6 literal (as in a URL's host) are accepted.
struct IPAddress: Equatable, Sendable {
    let bytes: [UInt8]

    init?(_ text: String) {
        var literal = Substring(text)
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        var v4 = [UInt8](repeating: 0, count: 4)
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, String(literal), &v4) == 1 {
            bytes = v4
        } else if inet_pton(AF_INET6, String(literal), &v6) == 1 {
            bytes = v6
        } else {
            return nil
        }
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Whether the first `prefixLength` bits equal `network`'s (both of one family).
    func isIn(_ network: IPAddress, prefixLength: Int) -> Bool {
        guard bytes.count == network.bytes.count else { return false }
        var bits = prefixLength
        for (mine, theirs) in zip(bytes, network.bytes) where bits > 0 {
            let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
            if mine & mask != theirs & mask { return false }
            bits -= 8
        }
        return true
    }
}
