internal import Glibc

/// An IPv4 or IPv6 address as its bytes (4 or 16), parsed with inet_pton; brackets around an
/// IPv6 literal (as in a URL's host) are accepted.
package struct IPAddress: Equatable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    package init?(_ text: String) {
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

    package init(bytes: [UInt8]) { self.bytes = bytes }

    /// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 2.5.5.2) as the IPv4 address its
    /// packets go to; any other address as it is.
    var unmapped: IPAddress {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return self }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// Its first `prefixLength` bits, the rest zero.
    func masked(to prefixLength: Int) -> IPAddress {
        var bits = prefixLength
        return IPAddress(bytes: bytes.map { byte in
            defer { bits -= 8 }
            return bits >= 8 ? byte : bits <= 0 ? 0 : byte & ~(0xFF >> UInt8(bits))
        })
    }

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

extension IPAddress {
    /// As inet_ntop writes it: "10.0.0.0", "fc00::", "::ffff:10.1.2.3".
    package var description: String {
        guard bytes.count == 4 || bytes.count == 16 else { return "?" }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, bytes, &text, socklen_t(text.count)) != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
