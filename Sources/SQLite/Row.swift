public import FoundationEssentials

/// One result row, copied out of the statement so it outlives the next `sqlite3_step`.
public struct Row: Sendable {
    public let values: [SQLiteValue]

    public subscript(_ index: Int) -> SQLiteValue { values[index] }

    public func int(_ index: Int) -> Int? {
        if case .integer(let v) = values[index] { return Int(v) }
        return nil
    }
    public func double(_ index: Int) -> Double? {
        switch values[index] {
        case .real(let v): return v
        case .integer(let v): return Double(v)
        default: return nil
        }
    }
    public func string(_ index: Int) -> String? {
        if case .text(let v) = values[index] { return v }
        return nil
    }
    /// SQLite has no boolean type: an integer, nonzero for true.
    public func bool(_ index: Int) -> Bool? { int(index).map { $0 != 0 } }
    public func data(_ index: Int) -> Data? {
        switch values[index] {
        case .blob(let v): return v
        case .text(let v): return Data(v.utf8)
        default: return nil
        }
    }
}
