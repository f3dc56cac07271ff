public import FoundationEssentials

/// A value sent as a statement's parameter or read from a result column.
public enum PostgresValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case text(String)
    /// `bytea`: sent in binary, read from its hex text form.
    case bytes(Data)
}

/// Swift types that bind as statement parameters (`$1`, `$2`, ...).
public protocol PostgresBindable: Sendable {
    var postgresValue: PostgresValue { get }
}

extension Int: PostgresBindable { public var postgresValue: PostgresValue { .integer(Int64(self)) } }
extension Int64: PostgresBindable { public var postgresValue: PostgresValue { .integer(self) } }
extension Double: PostgresBindable { public var postgresValue: PostgresValue { .real(self) } }
extension Bool: PostgresBindable { public var postgresValue: PostgresValue { .boolean(self) } }
extension String: PostgresBindable { public var postgresValue: PostgresValue { .text(self) } }
extension Data: PostgresBindable { public var postgresValue: PostgresValue { .bytes(self) } }
extension PostgresValue: PostgresBindable { public var postgresValue: PostgresValue { self } }
extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public var postgresValue: PostgresValue { self?.postgresValue ?? .null }
}

extension PostgresValue {
    /// The parameter's bytes in PostgreSQL's text input form (binary for `bytea`), nil for NULL.
    /// - SeeAlso: https://www.postgresql.org/docs/15/datatype-numeric.html (Infinity, NaN)
    var parameter: (bytes: [UInt8], binary: Bool)? {
        switch self {
        case .null: nil
        case .integer(let value): (Array(String(value).utf8), false)
        case .real(let value):
            if value.isNaN { (Array("NaN".utf8), false) }
            else if value.isInfinite { (Array((value < 0 ? "-Infinity" : "Infinity").utf8), false) }
            else { (Array("\(value)".utf8), false) }
        case .boolean(let value): (Array((value ? "t" : "f").utf8), false)
        case .text(let value): (Array(value.utf8), false)
        case .bytes(let value): ([UInt8](value), true)
        }
    }
}
