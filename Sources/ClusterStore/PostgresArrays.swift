internal import FoundationEssentials

/// Values as PostgreSQL's array literals (text input form), so many rows travel as one
/// statement's few parameters (`unnest($1::bigint[], ...)`) instead of a round trip each. Bound
/// as text parameters like any other value: never spliced into SQL.
/// - SeeAlso: https://www.postgresql.org/docs/15/arrays.html#ARRAYS-IO
enum PostgresArrays {
    static func integers(_ values: [Int?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    static func doubles(_ values: [Double?]) -> String {
        "{" + values.map { value in
            guard let value else { return "NULL" }
            return value.isFinite ? "\(value)" : (value.isNaN ? "NaN" : (value < 0 ? "-Infinity" : "Infinity"))
        }.joined(separator: ",") + "}"
    }

    /// Each element double-quoted, with its backslashes and double quotes escaped.
    static func texts(_ values: [String?]) -> String {
        var literal = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { literal += "," }
            guard let value else { literal += "NULL"; continue }
            literal += "\""
            for character in value.unicodeScalars {
                if character == "\\" || character == "\"" { literal += "\\" }
                literal.unicodeScalars.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }

    /// bytea elements in their hex form (`\x0a1b`), quoted as texts.
    static func byteas(_ values: [Data?]) -> String {
        texts(values.map { data in data.map { "\\x" + $0.map { byte in Self.hex[Int(byte)] }.joined() } })
    }

    private static let hex: [String] = (0...255).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }
}
