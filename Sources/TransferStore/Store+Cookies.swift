package import FoundationEssentials
internal import SQLite
package import TransferModel

/// One change to the `cookies` table (migration 4), queued by `CookieStorage` as
/// `StoreOperation.cookies`. `owner` is the jar's owner ('' for none).
package enum CookieRowChange: Sendable {
    case save(owner: String, Cookie)
    case delete(owner: String, Cookie.Key)
    case deleteAll(owner: String)
}

/// The persistent cookie jars: written through the queued writer (the engine thread never
/// waits on the disk), read once at start.
extension Store {
    static func apply(_ changes: [CookieRowChange], _ tx: Database.Transaction) throws {
        for change in changes {
            switch change {
            case .save(let owner, let cookie):
                try tx.run("""
                    INSERT OR REPLACE INTO cookies(owner, name, domain, path, value, host_only, expires, secure, http_only, same_site, created_at)
                    VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, owner, cookie.name, cookie.domain, cookie.path, cookie.value, cookie.isHostOnly,
                    cookie.expiresDate?.timeIntervalSince1970 ?? 0, cookie.isSecure, cookie.isHTTPOnly,
                    cookie.sameSitePolicy?.rawValue, cookie.createdAt.timeIntervalSince1970)
            case .delete(let owner, let key):
                try tx.run("DELETE FROM cookies WHERE owner = ? AND name = ? AND domain = ? AND path = ?", owner, key.name, key.domain, key.path)
            case .deleteAll(let owner):
                try tx.run("DELETE FROM cookies WHERE owner = ?", owner)
            }
        }
    }

    /// Every stored cookie that has not expired at `now`, by owner; the expired rows are deleted.
    package func loadCookies(now: Date) throws -> [String: [Cookie]] {
        try database.run("DELETE FROM cookies WHERE expires <= ?", now.timeIntervalSince1970)
        var jars: [String: [Cookie]] = [:]
        for row in try database.run("SELECT \(StoredRows.cookieColumns) FROM cookies") {
            let (owner, cookie) = StoredRows.cookie(row)
            jars[owner, default: []].append(cookie)
        }
        return jars
    }
}
