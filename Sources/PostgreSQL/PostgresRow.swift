public import FoundationEssentials

/// One result row, copied out of libpq's result so it outlives it. Columns are typed by their
/// type's OID (integers, floating point, boolean, bytea); every other type reads as its text.
public struct PostgresRow: Sendable {
    public let values: [PostgresValue]

    public subscript(_ index: Int) -> PostgresValue { values[index] }

    public func int(_ index: Int) -> Int? {
        switch values[index] {
        case .integer(let value): Int(exactly: value)
        case .text(let text): Int(text)
        default: nil
        }
    }

    public func double(_ index: Int) -> Double? {
        switch values[index] {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    public func bool(_ index: Int) -> Bool? {
        if case .boolean(let value) = values[index] { return value }
        return nil
    }

    public func string(_ index: Int) -> String? {
        switch values[index] {
        case .text(let text): text
        case .integer(let value): String(value)
        default: nil
        }
    }

    public func data(_ index: Int) -> Data? {
        switch values[index] {
        case .bytes(let value): value
        case .text(let text): Data(text.utf8)
        default: nil
        }
    }

    public func isNull(_ index: Int) -> Bool { values[index] == .null }
}
