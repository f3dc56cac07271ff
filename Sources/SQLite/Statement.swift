internal import CSQLite
public import FoundationEssentials

/// A prepared statement. Owned by its `Database` (cached there by SQL text) and used only on
/// the thread that holds the database's lock.
public final class Statement {
    private let handle: OpaquePointer
    private let db: OpaquePointer
    let sql: String
    /// How many parameters the statement has: when every one is bound, unbinding them first
    /// (`sqlite3_clear_bindings`, which frees each copied text) is work for nothing.
    private let parameterCount: Int

    init(db: OpaquePointer, sql: String) throws(SQLiteError) {
        var stmt: OpaquePointer?
        try SQLiteError.check(sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil), db, "prepare \(sql)")
        guard let stmt else { throw SQLiteError(code: SQLITE_MISUSE, message: "empty statement", context: sql) }
        self.handle = stmt
        self.db = db
        self.sql = sql
        self.parameterCount = Int(sqlite3_bind_parameter_count(stmt))
    }

    func finalize() { sqlite3_finalize(handle) }

    private func bind(_ arguments: [any SQLiteBindable]) throws(SQLiteError) {
        sqlite3_reset(handle)
        if arguments.count < parameterCount { sqlite3_clear_bindings(handle) }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch argument.sqliteValue {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .real(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(let v):
                // withCString lends a native string's own NUL-terminated bytes; passing the String
                // as the argument made a ContiguousArray copy first (utf8CString), a malloc and a
                // copy of every record on top of SQLite's own.
                rc = v.withCString { sqlite3_bind_text(handle, index, $0, -1, transferd_sqlite_transient()) }
            case .blob(let v):
                rc = v.withUnsafeBytes { raw in
                    // A zero-length blob still needs a non-NULL pointer to be a blob, not NULL.
                    sqlite3_bind_blob64(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(raw.count), transferd_sqlite_transient())
                }
            }
            try SQLiteError.check(rc, db, "bind \(index) of \(sql)")
        }
    }

    private func readRow() -> Row {
        let count = sqlite3_column_count(handle)
        var values: [SQLiteValue] = []
        values.reserveCapacity(Int(count))
        for column in 0..<count {
            switch sqlite3_column_type(handle, column) {
            case SQLITE_INTEGER: values.append(.integer(sqlite3_column_int64(handle, column)))
            case SQLITE_FLOAT: values.append(.real(sqlite3_column_double(handle, column)))
            case SQLITE_TEXT: values.append(.text(String(cString: sqlite3_column_text(handle, column))))
            case SQLITE_BLOB:
                let length = Int(sqlite3_column_bytes(handle, column))
                if let bytes = sqlite3_column_blob(handle, column), length > 0 {
                    values.append(.blob(Data(bytes: bytes, count: length)))
                } else {
                    values.append(.blob(Data()))
                }
            default: values.append(.null)
            }
        }
        return Row(values: values)
    }

    /// Runs the statement to completion and returns every row.
    func query(_ arguments: [any SQLiteBindable]) throws(SQLiteError) -> [Row] {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        var rows: [Row] = []
        while true {
            let rc = sqlite3_step(handle)
            if rc == SQLITE_ROW { rows.append(readRow()); continue }
            try SQLiteError.check(rc, db, "step \(sql)")
            return rows
        }
    }
}
