/// Content-Disposition filenames (RFC 6266): `filename*` (RFC 8187 ext-value, UTF-8 or
/// ISO-8859-1, percent-encoded) wins over `filename` (token or quoted-string).
public enum ContentDisposition {
    /// The filename a Content-Disposition value names, unsanitised; nil when none.
    public static func filename(in header: String) -> String? {
        let parameters = Self.parameters(header)
        if let extended = parameters["filename*"], let decoded = decodeExtended(extended) { return decoded }
        return parameters["filename"]
    }

    /// `attachment` with an ASCII fallback and the exact name as `filename*`.
    public static func attachment(filename: String) -> String {
        let fallback = String(filename.unicodeScalars.map { $0.isASCII && $0 != "\"" && $0 != "\\" && $0.value >= 0x20 ? Character($0) : "_" })
        let encoded = filename.utf8.map { byte -> String in
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || "!#$&+-.^_`|~".utf8.contains(byte)
            return unreserved ? String(UnicodeScalar(byte)) : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }.joined()
        return "attachment; filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)"
    }

    /// Parameter names (lowercased) to values, with quoted-strings unquoted. Semicolons inside
    /// quotes do not split.
    static func parameters(_ header: String) -> [String: String] {
        var result: [String: String] = [:]
        var characters = Substring(header)
        // Skip the disposition type.
        guard let first = characters.firstIndex(of: ";") else { return result }
        characters = characters[characters.index(after: first)...]
        while !characters.isEmpty {
            characters = characters.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let equals = characters.firstIndex(of: "=") else { break }
            let name = characters[..<equals].trimmed().lowercased()
            characters = characters[characters.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var value = ""
            if characters.first == "\"" {
                characters = characters.dropFirst()
                var escaped = false
                while let character = characters.first {
                    characters = characters.dropFirst()
                    if escaped { value.append(character); escaped = false }
                    else if character == "\\" { escaped = true }
                    else if character == "\"" { break }
                    else { value.append(character) }
                }
                characters = characters.drop { $0 != ";" }
            } else {
                let end = characters.firstIndex(of: ";") ?? characters.endIndex
                value = characters[..<end].trimmed()
                characters = characters[end...]
            }
            if result[name] == nil { result[name] = value }
        }
        return result
    }

    /// `charset'language'percent-encoded` (RFC 8187).
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = percentDecoded(parts[2]) else { return nil }
        switch parts[0].lowercased() {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1": return String(bytes.map { Character(UnicodeScalar($0)) })
        default: return nil
        }
    }

    static func percentDecoded(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexDigit), let low = iterator.next().flatMap(hexDigit) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// The value of one HEXDIG (either case); nil otherwise (UInt8(_:radix:) would accept "+A").
    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
