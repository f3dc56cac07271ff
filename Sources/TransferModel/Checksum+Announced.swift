internal import FoundationEssentials

/// A digest the server sent for the whole representation, and the header it came in.
package struct AnnouncedChecksum: Sendable, Equatable {
    package let checksum: Checksum
    /// `Repr-Digest`, `Content-Digest` or `Digest`, for the error message.
    package let header: String
}

extension Checksum {
    /// The strongest digest, of an algorithm we support, that the server sent for the whole of
    /// the bytes the task gets, or nil. Which headers describe those bytes:
    /// - `Repr-Digest` (RFC 9530 3): the selected representation, on a 200 and on a 206 alike.
    /// - `Content-Digest` (RFC 9530 2): the message content, which is the whole only on a 200.
    /// - `Digest` (RFC 3230 4.3.2): the instance; taken on a 200 only, where no range can make
    ///   a server's reading of "instance" matter.
    ///
    /// None is taken when the response has a Content-Encoding: all three then describe the
    /// encoded bytes (RFC 9530 3.1, representation data includes its content coding), while
    /// libcurl hands us the decoded ones (`acceptEncoding("")`). Nor for HEAD (no body), nor for
    /// any other status. Unknown algorithms and malformed values are ignored.
    package static func announced(by response: ResponseInfo, method: String) -> AnnouncedChecksum? {
        guard method.uppercased() != "HEAD", response.statusCode == 200 || response.statusCode == 206 else { return nil }
        let headers = response.headers
        if let coding = ResponseInfo.value(of: "Content-Encoding", in: headers)?.trimmed(), !coding.isEmpty,
           coding.lowercased() != "identity" {
            return nil
        }
        var found: [AnnouncedChecksum] = []
        if let value = ResponseInfo.value(of: "Repr-Digest", in: headers) {
            found += structuredDigests(value).map { AnnouncedChecksum(checksum: $0, header: "Repr-Digest") }
        }
        if response.statusCode == 200 {
            if let value = ResponseInfo.value(of: "Content-Digest", in: headers) {
                found += structuredDigests(value).map { AnnouncedChecksum(checksum: $0, header: "Content-Digest") }
            }
            if let value = ResponseInfo.value(of: "Digest", in: headers) {
                found += instanceDigests(value).map { AnnouncedChecksum(checksum: $0, header: "Digest") }
            }
        }
        // The first of the strongest: Repr-Digest before Content-Digest before Digest.
        guard let strongest = found.map(\.checksum.algorithm).max() else { return nil }
        return found.first { $0.checksum.algorithm == strongest }
    }

    /// RFC 9530's Dictionary Structured Field (RFC 8941 3.2) of byte sequences:
    /// `sha-256=:BASE64:, sha-512=:BASE64:`; parameters after `;` are ignored. Repeated header
    /// lines arrive joined with ", ", which is the same dictionary.
    static func structuredDigests(_ value: String) -> [Checksum] {
        value.split(separator: ",").compactMap { member in
            guard let equals = member.firstIndex(of: "=") else { return nil }
            let key = member[..<equals].trimmed()
            var item = member[member.index(after: equals)...].trimmed()
            if let semicolon = item.firstIndex(of: ";") { item = String(item[..<semicolon]).trimmed() }
            guard item.count >= 2, item.hasPrefix(":"), item.hasSuffix(":"),
                  key == key.lowercased(), let algorithm = DigestAlgorithm(rawValue: key) else { return nil }
            return checksum(algorithm, base64: String(item.dropFirst().dropLast()))
        }
    }

    /// RFC 3230's `Digest: SHA-256=BASE64, MD5=BASE64` (algorithm names case-insensitive; RFC
    /// 3230's "SHA" is SHA-1, RFC 5843 adds SHA-256 and SHA-512).
    static func instanceDigests(_ value: String) -> [Checksum] {
        value.split(separator: ",").compactMap { member in
            guard let equals = member.firstIndex(of: "=") else { return nil }
            let name = member[..<equals].trimmed().lowercased()
            guard let algorithm = name == "sha" ? .sha1 : DigestAlgorithm(name: name) else { return nil }
            return checksum(algorithm, base64: member[member.index(after: equals)...].trimmed())
        }
    }

    private static func checksum(_ algorithm: DigestAlgorithm, base64: String) -> Checksum? {
        guard let bytes = Data(base64Encoded: base64), bytes.count == algorithm.byteCount else { return nil }
        return Checksum(algorithm: algorithm, hex: hexString(bytes))
    }
}

/// Lowercase hex of bytes.
/// Inlinable, and no table allocated per call: every download's digest is written with it, and
/// called unspecialized across modules it walked the bytes through witness tables.
@inlinable
package func hexString(_ bytes: some Sequence<UInt8>) -> String {
    var text: [UInt8] = []
    text.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        text.append(hexDigit(byte >> 4))
        text.append(hexDigit(byte & 0x0f))
    }
    return String(decoding: text, as: UTF8.self)
}

/// The lowercase hex digit of a nibble (0...15).
@inlinable
package func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? 0x30 + nibble : 0x57 + nibble
}
