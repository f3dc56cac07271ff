internal import CSQLite

/// A failed SQLite call: the result code and SQLite's own message. Every C result code passes
/// through `SQLiteError.check`, the one funnel from C codes to Swift errors.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let context: String

    public var description: String { "SQLite error \(code) in \(context): \(message)" }

    /// `SQLITE_BUSY` or `SQLITE_LOCKED`: another connection holds the lock.
    public var isBusy: Bool { code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED }

    static func check(_ rc: Int32, _ db: OpaquePointer?, _ context: @autoclosure () -> String) throws(SQLiteError) {
        guard rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE else { return }
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
        throw SQLiteError(code: rc, message: message, context: context())
    }
}
