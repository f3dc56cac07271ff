internal import CSQLite
public import FoundationEssentials
internal import Synchronization

/// One SQLite connection. Every call takes the connection's lock, so the C handle is used by one
/// thread at a time and never escapes this type. The owner closes it explicitly with `close()`.
public final class Database: Sendable {
    private let connection: Mutex<Connection>
    public let path: String

    /// Opens (creating if needed) the database file at `path`.
    /// - SeeAlso: https://sqlite.org/c3ref/open.html
    public init(path: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        // NOMUTEX: our own lock serialises every use of the connection.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: rc, message: message, context: "open \(path)")
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
        self.path = path
        self.connection = Mutex(Connection(handle: handle))
    }

    /// Executes statements that take no arguments (schema, pragmas).
    public func execute(script: String) throws(SQLiteError) {
        try connection.withLock { (c: inout Connection) throws(SQLiteError) in try c.execute(script) }
    }

    /// Runs one statement with arguments, returning its rows (empty for writes).
    @discardableResult
    public func run(_ sql: String, _ arguments: any SQLiteBindable...) throws(SQLiteError) -> [Row] {
        try connection.withLock { (c: inout Connection) throws(SQLiteError) in try c.run(sql, arguments) }
    }

    /// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back if it throws. The lock is held
    /// for the whole transaction, so no other thread's statement interleaves.
    public func transaction<T: Sendable>(_ body: (Transaction) throws -> T) throws -> T {
        try connection.withLock { (c: inout Connection) throws -> T in
            // A failed COMMIT whose ROLLBACK failed too would leave a transaction open, and every
            // later BEGIN would fail: end it first (sqlite3_get_autocommit is 0 inside one).
            // - SeeAlso: https://sqlite.org/c3ref/get_autocommit.html
            if c.inTransaction { _ = try? c.run("ROLLBACK", []) }
            try c.run("BEGIN IMMEDIATE", [])
            do {
                let value = try body(Transaction(connection: c))
                try c.run("COMMIT", [])
                return value
            } catch {
                _ = try? c.run("ROLLBACK", [])
                throw error
            }
        }
    }

    /// Closes the connection; later calls throw. Idempotent.
    public func close() {
        connection.withLock { c in c.close() }
    }

    /// The statements of one open transaction. Valid only inside the `transaction` body that
    /// received it (keeping it longer is a programmer error: it would bypass the lock).
    public struct Transaction {
        fileprivate let connection: Connection

        @discardableResult
        public func run(_ sql: String, _ arguments: any SQLiteBindable...) throws(SQLiteError) -> [Row] {
            try connection.run(sql, arguments)
        }

        /// Executes statements that take no arguments (a migration's script, triggers included).
        public func execute(script: String) throws(SQLiteError) {
            try connection.execute(script)
        }

        /// The rowid of the last INSERT in this transaction.
        public var lastInsertRowID: Int64 { connection.lastInsertRowID }
    }
}

/// The C handle and its statement cache. Owned by `Database`'s mutex; non-Sendable on purpose.
private final class Connection {
    private var handle: OpaquePointer?
    private var statements: [String: Statement] = [:]
    /// The same statements by where their SQL text is stored, for the texts that are stored (not
    /// small): the stores run the same few long texts (a task's upsert is 700 bytes) from `static`
    /// constants, and hashing the whole text on every run was 3% of a batch task's instructions
    /// (callgrind). A hit counts only if the texts are equal, which for the same storage is one
    /// comparison, so a text freed and another stored at its address cannot take its statement.
    /// Emptied when full: texts built per call would otherwise add an address each.
    private var statementsByAddress: [UnsafeRawPointer: Statement] = [:]
    private static let addressedStatements = 64

    init(handle: OpaquePointer) { self.handle = handle }

    private static let closedError = SQLiteError(code: SQLITE_MISUSE, message: "database is closed", context: "use")

    func execute(_ script: String) throws(SQLiteError) {
        guard let handle else { throw Self.closedError }
        try SQLiteError.check(sqlite3_exec(handle, script, nil, nil, nil), handle, "exec")
    }

    func run(_ sql: String, _ arguments: [any SQLiteBindable]) throws(SQLiteError) -> [Row] {
        try statement(sql).query(arguments)
    }

    var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Whether a transaction is open on the connection.
    var inTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    private func statement(_ sql: String) throws(SQLiteError) -> Statement {
        // Small strings (up to 15 bytes) live in the String value itself: their bytes have no
        // address of their own.
        let address = sql.utf8.count > 15 ? sql.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil : nil
        if let address, let cached = statementsByAddress[address], cached.sql == sql { return cached }
        let statement: Statement
        if let cached = statements[sql] {
            statement = cached
        } else {
            guard let handle else { throw Self.closedError }
            statement = try Statement(db: handle, sql: sql)
            statements[sql] = statement
        }
        if let address {
            if statementsByAddress.count >= Self.addressedStatements { statementsByAddress.removeAll(keepingCapacity: true) }
            statementsByAddress[address] = statement
        }
        return statement
    }

    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        statementsByAddress.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }
}
