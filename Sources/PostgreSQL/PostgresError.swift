/// A failed PostgreSQL call: the server's SQLSTATE (five characters; empty when the failure was
/// the connection's, not a statement's) and libpq's message.
/// - SeeAlso: https://www.postgresql.org/docs/15/errcodes-appendix.html
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public let sqlState: String
    public let message: String
    public let context: String

    public init(sqlState: String, message: String, context: String) {
        self.sqlState = sqlState
        self.message = message
        self.context = context
    }

    public var description: String {
        "PostgreSQL error\(sqlState.isEmpty ? "" : " \(sqlState)") in \(context): \(message)"
    }

    /// 23505: a unique index refused the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// 40001 or 40P01: the transaction lost a serialization conflict or a deadlock; try it again.
    public var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// No statement ran: the connection could not be made or was lost (class 08, or none).
    public var isConnectionFailure: Bool { sqlState.isEmpty || sqlState.hasPrefix("08") }
}
