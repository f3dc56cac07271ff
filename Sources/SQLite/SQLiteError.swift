internal import CSQLite
internal import Glibc

/// A failed SQLite call: the result code and SQLite's own message. Every C result code passes
/// through `SQLiteError.check`, the one funnel from C codes to Swift errors.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let context: String
    /// The `errno` of the system call behind the failure, when SQLite saw one (0 otherwise).
    /// - SeeAlso: https://sqlite.org/c3ref/system_errno.html
    public let systemErrno: Int32

    public init(code: Int32, message: String, context: String, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.context = context
        self.systemErrno = systemErrno
    }

    public var description: String { "SQLite error \(code) in \(context): \(message)" }

    /// `SQLITE_BUSY` or `SQLITE_LOCKED`: another connection holds the lock.
    public var isBusy: Bool { code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED }

    /// The disk (or the quota) is full: `SQLITE_FULL`, or an I/O error whose system call failed
    /// with ENOSPC or EDQUOT (SQLite maps a short write to SQLITE_FULL, but a failed `fallocate`,
    /// `ftruncate` or `fsync` surfaces as an SQLITE_IOERR_* with the errno kept).
    public var isDiskFull: Bool {
        code & 0xff == SQLITE_FULL || (code & 0xff == SQLITE_IOERR && (systemErrno == ENOSPC || systemErrno == EDQUOT))
    }

    /// The row itself cannot be stored, whatever the disk does: a constraint, a value too big
    /// or of the wrong type. Retrying it can never succeed. Not SQLITE_ERROR: that generic code
    /// also comes from the connection's state ("cannot start a transaction within a
    /// transaction"), and a caller that drops rejected rows must not drop good ones for it.
    public var isRejection: Bool {
        [SQLITE_CONSTRAINT, SQLITE_TOOBIG, SQLITE_MISMATCH, SQLITE_RANGE].contains(code & 0xff)
    }

    static func check(_ rc: Int32, _ db: OpaquePointer?, _ context: @autoclosure () -> String) throws(SQLiteError) {
        guard rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE else { return }
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
        throw SQLiteError(code: rc, message: message, context: context(), systemErrno: db.map { sqlite3_system_errno($0) } ?? 0)
    }
}
