/// Reads just enough DER (X.690) to tell whether bytes have the outline of an X.509
/// certificate: Certificate ::= SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm
/// SEQUENCE, signatureValue BIT STRING } filling the bytes exactly (RFC 5280 4.1). The daemon
/// does not import an X.509 library (it would bring all of Foundation): OpenSSL does the real
/// parsing at the handshake.
enum DERShape {
    static func isCertificate(_ der: [UInt8]) -> Bool {
        guard let outer = element(der, at: 0), outer.tag == 0x30, outer.end == der.count else { return false }
        var offset = outer.contentStart
        for expected: UInt8 in [0x30, 0x30, 0x03] {
            guard let inner = element(der, at: offset), inner.tag == expected, inner.end <= outer.end else { return false }
            offset = inner.end
        }
        return offset == outer.end
    }

    /// The tag, where the content starts and where the element ends, of the element at `offset`.
    private static func element(_ der: [UInt8], at offset: Int) -> (tag: UInt8, contentStart: Int, end: Int)? {
        guard offset + 2 <= der.count else { return nil }
        let tag = der[offset]
        let first = Int(der[offset + 1])
        var start = offset + 2
        var length = first
        if first >= 0x80 {
            let count = first & 0x7F
            // Definite lengths of one to four bytes only (certificates are far below 4 GiB).
            guard (1...4).contains(count), start + count <= der.count else { return nil }
            length = der[start..<start + count].reduce(0) { $0 << 8 | Int($1) }
            start += count
        }
        guard start + length <= der.count else { return nil }
        return (tag, start, start + length)
    }
}
