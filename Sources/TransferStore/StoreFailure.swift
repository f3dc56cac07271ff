internal import SQLite

/// Why the store could not commit a write: the disk is full, or the database is unavailable
/// otherwise (I/O error, read-only or vanished file, closed store). Raised by `Store.commit()` to
/// the API, which answers 507 `insufficient_storage` or 503 `store_unavailable`; also the reason
/// `GET /readyz` fails while commits fail. Never carries SQL arguments or row content.
public struct StoreFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// SQLITE_FULL, or an I/O error with ENOSPC/EDQUOT.
        case diskFull = "disk_full"
        /// Any other reason the database refused the commit.
        case unavailable
    }

    public let kind: Kind
    /// SQLite's code and message (`database or disk is full`), for logs and error messages.
    public let reason: String

    public init(kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// Classifies what a failed transaction threw. `error` is an `SQLiteError` in practice; an
    /// encoding error of a row is a `rejection` and never reaches here.
    init(_ error: any Error) {
        if let error = error as? SQLiteError {
            kind = error.isDiskFull ? .diskFull : .unavailable
            reason = "SQLite error \(error.code): \(error.message)" + (error.systemErrno != 0 ? " (errno \(error.systemErrno))" : "")
        } else {
            kind = .unavailable
            reason = "\(error)"
        }
    }

    /// Whether retrying the operation that threw `error` can never succeed: a row the database
    /// refuses whatever the disk does (a constraint, a value it cannot encode). Such a row is
    /// dropped rather than kept pending, or it would block every later write. Anything unsure
    /// counts as a failure to retry, never as a rejection.
    static func isRejection(_ error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return true }
        return error.isRejection
    }

    public var description: String {
        switch kind {
        case .diskFull: "the disk of the data folder is full (\(reason))"
        case .unavailable: "the database cannot commit (\(reason))"
        }
    }
}
