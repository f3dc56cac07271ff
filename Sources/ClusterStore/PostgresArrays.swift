internal import FoundationEssentials

/// Values as PostgreSQL's array literals (text input form), so many rows travel as one
/// statement's few parameters (`unnest($1::bigint[], ...)`) instead of a round trip each. Bound
/// as text parameters like any other value: never spliced into SQL.
/// - SeeAlso: https://www.postgresql.org/docs/15/arrays.html#ARRAYS-IO
enum PostgresArrays {
    static func integers(_ values: [Int?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    /// The integers of an integer array's text form, as the server sends one (`{1,2,3}`).
    static func integers(from literal: String?) -> [Int] {
        (literal ?? "").split { $0 == "{" || $0 == "}" || $0 == "," }.compactMap { Int($0) }
    }

    static func booleans(_ values: [Bool]) -> String {
        "{" + values.map { $0 ? "t" : "f" }.joined(separator: ",") + "}"
    }

    static func doubles(_ values: [Double?]) -> String {
        "{" + values.map { value in
            guard let value else { return "NULL" }
            return value.isFinite ? "\(value)" : (value.isNaN ? "NaN" : (value < 0 ? "-Infinity" : "Infinity"))
        }.joined(separator: ",") + "}"
    }

    /// Each element double-quoted, with its backslashes and double quotes escaped. Built as
    /// UTF-8 bytes: a batch's records are megabytes, too many for a String append per character.
    static func texts(_ values: [String?]) -> String {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let value else { literal += Array("NULL".utf8); continue }
            literal.append(quote)
            for byte in value.utf8 {
                if byte == quote || byte == backslash { literal.append(backslash) }
                literal.append(byte)
            }
            literal.append(quote)
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    /// bytea elements in their hex form (`\x0a1b`), quoted as texts.
    static func byteas(_ values: [Data?]) -> String {
        texts(values.map { data in data.map { "\\x" + $0.map { byte in Self.hex[Int(byte)] }.joined() } })
    }

    private static let hex: [String] = (0...255).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }
}
