internal import CLibPQ
internal import FoundationEssentials
internal import Glibc
internal import Synchronization

/// One connection to a PostgreSQL server through libpq, PostgreSQL's own client library. Every
/// call takes the connection's lock, so the C handle is used by one thread at a time and never
/// escapes this type; statements block the calling thread, as the SQLite layer's do (the store
/// runs on threads of its own, ARCHITECTURE.md). The owner closes it with `close()`.
///
/// Parameters go as `$1`, `$2`, ... in text form (`bytea` in binary), so no value is ever
/// spliced into SQL. Results come back as text and are typed by column (`PostgresRow`).
public final class PostgresConnection: Sendable {
    private let connection: Mutex<Handle>
    /// The URL it was opened with, without its password (for messages and logs).
    public let displayURL: String

    /// Connects to `url` (`postgresql://USER[:PASSWORD]@HOST:PORT/DB` or a libpq keyword string).
    /// `setup`, statements without parameters (`SET ...`), runs on the new session and again
    /// on every session a reconnect makes.
    /// - SeeAlso: https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING
    public init(url: String, setup: String? = nil) throws(PostgresError) {
        displayURL = Self.withoutPassword(url)
        guard let handle = PQconnectdb(url) else {
            throw PostgresError(sqlState: "", message: "out of memory", context: "connect \(displayURL)")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(handle))
            PQfinish(handle)
            throw PostgresError(sqlState: "", message: message, context: "connect \(displayURL)")
        }
        let owned = Handle(handle, setup: setup)
        try owned.runSetup(on: handle, context: "connect \(displayURL)")
        connection = Mutex(owned)
    }

    /// Executes statements that take no parameters (a migration's script), in one round trip.
    public func execute(script: String) throws(PostgresError) {
        try connection.withLock { (c: inout Handle) throws(PostgresError) in try c.execute(script) }
    }

    /// Runs one statement with parameters, returning its rows (empty for a write without RETURNING).
    @discardableResult
    public func run(_ sql: String, _ parameters: any PostgresBindable...) throws(PostgresError) -> [PostgresRow] {
        try connection.withLock { (c: inout Handle) throws(PostgresError) in try c.run(sql, parameters) }
    }

    /// `run` with its parameters in an array (for layers that forward theirs).
    @discardableResult
    public func run(_ sql: String, parameters: [any PostgresBindable]) throws(PostgresError) -> [PostgresRow] {
        try connection.withLock { (c: inout Handle) throws(PostgresError) in try c.run(sql, parameters) }
    }

    /// Runs `body` between BEGIN and COMMIT (ROLLBACK if it throws), holding the lock throughout
    /// so no other thread's statement interleaves. `isolation` is a level of SET TRANSACTION.
    public func transaction<T: Sendable>(isolation: Isolation = .readCommitted, _ body: (Transaction) throws -> T) throws -> T {
        try connection.withLock { (c: inout Handle) throws -> T in
            try c.execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
            do {
                let value = try body(Transaction(handle: c, generation: c.generation))
                try c.execute("COMMIT")
                return value
            } catch {
                try? c.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Waits up to `timeout` seconds for NOTIFY messages on the channels this connection LISTENs
    /// to, and returns those that came (empty when none did).
    /// - SeeAlso: https://www.postgresql.org/docs/15/libpq-notify.html
    public func notifications(timeout: Double) throws(PostgresError) -> [PostgresNotification] {
        try connection.withLock { (c: inout Handle) throws(PostgresError) in try c.notifications(timeout: timeout) }
    }

    /// Closes the connection; later calls throw. Idempotent.
    public func close() {
        connection.withLock { c in c.close() }
    }

    /// The isolation levels a transaction may ask for.
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// The statements of one open transaction. Valid only inside the `transaction` body that
    /// received it (keeping it longer would bypass the lock).
    public struct Transaction {
        fileprivate let handle: Handle
        /// The connection's generation at BEGIN: a statement after a reconnect would run
        /// outside the transaction, so it fails instead.
        fileprivate let generation: Int

        @discardableResult
        public func run(_ sql: String, _ parameters: any PostgresBindable...) throws(PostgresError) -> [PostgresRow] {
            try sameConnection()
            return try handle.run(sql, parameters)
        }

        @discardableResult
        public func run(_ sql: String, parameters: [any PostgresBindable]) throws(PostgresError) -> [PostgresRow] {
            try sameConnection()
            return try handle.run(sql, parameters)
        }

        public func execute(script: String) throws(PostgresError) {
            try sameConnection()
            try handle.execute(script)
        }

        private func sameConnection() throws(PostgresError) {
            guard handle.generation == generation, !handle.isBroken else {
                throw PostgresError(sqlState: "", message: "the connection was lost during the transaction", context: "transaction")
            }
        }
    }

    /// `scheme://user:password@host...` with the password replaced by `***`; anything else as is.
    static func withoutPassword(_ url: String) -> String {
        let characters = Array(url)
        guard let schemeEnd = (0..<max(0, characters.count - 2)).first(where: { characters[$0..<$0 + 3] == [":", "/", "/"] }),
              let at = characters[(schemeEnd + 3)...].firstIndex(of: "@"),
              let colon = characters[(schemeEnd + 3)..<at].firstIndex(of: ":") else { return url }
        return String(characters[..<colon]) + ":***" + String(characters[at...])
    }

    /// libpq's message without the line break it ends with.
    static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown error" }
        var text = String(cString: message)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}

/// A NOTIFY received on a channel the connection listens to.
public struct PostgresNotification: Sendable, Equatable {
    public let channel: String
    public let payload: String
    /// The server process that sent it.
    public let senderPID: Int32
}

/// The C handle. Owned by `PostgresConnection`'s mutex; non-Sendable on purpose.
private final class Handle {
    private var pointer: OpaquePointer?
    /// How many times the connection was made again (`live`).
    private(set) var generation = 0
    /// Statements prepared on this connection (`PQprepare`), by their text: each is parsed and
    /// planned once per connection instead of at every call (the store runs a few dozen texts,
    /// the writer's thousands of times a second). Forgotten when the connection is made again,
    /// since the server forgot them; at most `maxPrepared`, beyond which statements run unprepared.
    private var prepared: [String: String] = [:]
    static let maxPrepared = 256

    /// Whether the connection is lost (the next statement would make it again).
    var isBroken: Bool { pointer.map { PQstatus($0) == CONNECTION_BAD } ?? true }

    /// Run on every session this handle opens (`PostgresConnection.init`'s `setup`).
    private let setup: String?

    init(_ pointer: OpaquePointer, setup: String?) {
        self.pointer = pointer
        self.setup = setup
    }

    /// The open handle; a connection the server or the network dropped is made again first
    /// (`PQreset`, same parameters), so a store writer's retry finds the database once it is
    /// back. What the old session held (LISTEN, an open transaction) is gone with it.
    private func live(_ context: String) throws(PostgresError) -> OpaquePointer {
        guard let pointer else { throw PostgresError(sqlState: "", message: "connection is closed", context: context) }
        if PQstatus(pointer) == CONNECTION_BAD {
            generation += 1
            prepared.removeAll()
            PQreset(pointer)
            guard PQstatus(pointer) == CONNECTION_OK else {
                throw PostgresError(sqlState: "", message: PostgresConnection.trimmed(PQerrorMessage(pointer)), context: "reconnect for \(context)")
            }
            try runSetup(on: pointer, context: "reconnect for \(context)")
        }
        return pointer
    }

    /// `setup` on a new session: the first, and each a reconnect makes.
    func runSetup(on pointer: OpaquePointer, context: String) throws(PostgresError) {
        guard let setup else { return }
        let result = PQexec(pointer, setup)
        defer { PQclear(result) }
        _ = try Self.check(result, pointer, "setup for \(context)")
    }

    func execute(_ script: String) throws(PostgresError) {
        let connection = try live("execute")
        let result = PQexec(connection, script)
        defer { PQclear(result) }
        _ = try Self.check(result, connection, "execute")
    }

    func run(_ sql: String, _ parameters: [any PostgresBindable], retrying: Bool = false) throws(PostgresError) -> [PostgresRow] {
        let connection = try live("run")
        let values = parameters.map { $0.postgresValue.parameter }
        // One buffer holds every parameter, each NUL-terminated; libpq reads them by pointer.
        var buffer: [UInt8] = []
        var offsets: [Int] = []
        for value in values {
            offsets.append(buffer.count)
            if let value { buffer += value.bytes }
            buffer.append(0)
        }
        let lengths = values.map { Int32($0?.bytes.count ?? 0) }
        let formats = values.map { Int32($0?.binary == true ? 1 : 0) }
        // bytea's type (17) given for binary parameters; the server infers the others.
        let types = values.map { $0?.binary == true ? Oid(17) : Oid(0) }
        let name = try preparedName(sql, types, connection)
        let result = buffer.withUnsafeBufferPointer { bytes in
            let pointers: [UnsafePointer<CChar>?] = zip(values, offsets).map { value, offset in
                value == nil ? nil : UnsafeRawPointer(bytes.baseAddress! + offset).assumingMemoryBound(to: CChar.self)
            }
            if let name {
                return PQexecPrepared(connection, name, Int32(values.count), pointers, lengths, formats, 0)
            }
            return PQexecParams(connection, sql, Int32(values.count), types, pointers, lengths, formats, 0)
        }
        defer { PQclear(result) }
        do {
            return try Self.rows(of: try Self.check(result, connection, "run"))
        } catch where error.sqlState == "26000" && name != nil && !retrying {
            // invalid_sql_statement_name: the server's session lost it (a pooler in transaction
            // mode, a DISCARD ALL). Forget every name and run it again, prepared anew.
            prepared.removeAll()
            return try run(sql, parameters, retrying: true)
        }
    }

    /// The name `sql` is prepared under on this connection, preparing it now (with the
    /// parameters' types of this first call: bytea for binary ones, the others inferred) if it is
    /// new; nil when the cache is full.
    private func preparedName(_ sql: String, _ types: [Oid], _ connection: OpaquePointer) throws(PostgresError) -> String? {
        if let name = prepared[sql] { return name }
        guard prepared.count < Self.maxPrepared else { return nil }
        let name = "transferd_\(prepared.count)"
        let result = PQprepare(connection, name, sql, Int32(types.count), types)
        defer { PQclear(result) }
        _ = try Self.check(result, connection, "prepare")
        prepared[sql] = name
        return name
    }

    func notifications(timeout: Double) throws(PostgresError) -> [PostgresNotification] {
        let connection = try live("notifications")
        var received = try drainNotifications(connection)
        guard received.isEmpty else { return received }
        var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
        guard descriptor.fd >= 0 else { throw PostgresError(sqlState: "", message: "no socket", context: "notifications") }
        let ready = poll(&descriptor, 1, Int32(max(0, min(timeout, 3_600)) * 1_000))
        if ready < 0 && errno != EINTR {
            throw PostgresError(sqlState: "", message: String(cString: strerror(errno)), context: "notifications")
        }
        return try drainNotifications(connection)
    }

    private func drainNotifications(_ connection: OpaquePointer) throws(PostgresError) -> [PostgresNotification] {
        guard PQconsumeInput(connection) == 1 else {
            throw PostgresError(sqlState: "", message: PostgresConnection.trimmed(PQerrorMessage(connection)), context: "notifications")
        }
        var received: [PostgresNotification] = []
        while let notify = PQnotifies(connection) {
            received.append(PostgresNotification(channel: String(cString: notify.pointee.relname),
                                                 payload: String(cString: notify.pointee.extra),
                                                 senderPID: notify.pointee.be_pid))
            PQfreemem(notify)
        }
        return received
    }

    func close() {
        if let pointer { PQfinish(pointer) }
        pointer = nil
    }

    deinit { close() }

    /// The one funnel from libpq's result statuses to Swift errors.
    private static func check(_ result: OpaquePointer?, _ connection: OpaquePointer, _ context: String) throws(PostgresError) -> OpaquePointer {
        guard let result else {
            throw PostgresError(sqlState: "", message: PostgresConnection.trimmed(PQerrorMessage(connection)), context: context)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            throw PostgresError(sqlState: state, message: PostgresConnection.trimmed(PQresultErrorMessage(result)), context: context)
        }
    }

    /// Copies a result's rows out, typing each column by its type's OID.
    /// - SeeAlso: https://www.postgresql.org/docs/15/datatype-oid.html (pg_type's OIDs)
    private static func rows(of result: OpaquePointer) -> [PostgresRow] {
        let count = Int(PQntuples(result)), columns = Int(PQnfields(result))
        let types = (0..<columns).map { PQftype(result, Int32($0)) }
        var rows: [PostgresRow] = []
        rows.reserveCapacity(count)
        for row in 0..<count {
            var values: [PostgresValue] = []
            values.reserveCapacity(columns)
            for column in 0..<columns {
                let (r, c) = (Int32(row), Int32(column))
                if PQgetisnull(result, r, c) == 1 {
                    values.append(.null)
                    continue
                }
                let text = PQgetvalue(result, r, c)!
                switch types[column] {
                case 20, 21, 23, 26: values.append(Int64(String(cString: text)).map { .integer($0) } ?? .text(String(cString: text)))
                case 700, 701: values.append(Double(String(cString: text)).map { .real($0) } ?? .text(String(cString: text)))
                case 16: values.append(.boolean(text.pointee == CChar(UInt8(ascii: "t"))))
                case 17: values.append(.bytes(unescapedBytea(text)))
                default: values.append(.text(String(cString: text)))
                }
            }
            rows.append(PostgresRow(values: values))
        }
        return rows
    }

    private static func unescapedBytea(_ text: UnsafePointer<CChar>) -> Data {
        var length = 0
        guard let bytes = text.withMemoryRebound(to: UInt8.self, capacity: 1, { PQunescapeBytea($0, &length) }) else { return Data() }
        defer { PQfreemem(bytes) }
        return Data(bytes: bytes, count: length)
    }
}
