/// A read the store could not make now: its database is unreachable (a PostgreSQL server down or
/// a dropped connection, made again by the next read). The API answers 503 `store_unavailable`,
/// never a 500 (it is not our bug) nor a 404 (the row may well exist). Never carries SQL
/// arguments or row content.
public struct StoreReadFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String

    public init(reason: String) { self.reason = reason }

    public var description: String { reason }
}
