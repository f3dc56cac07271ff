internal import FoundationEssentials
internal import SQLite
package import TransferModel

/// The `url_cache` table (migration 7), the persistent URL cache's index. Written at once, not
/// through the queued writer, by the cache's own queue (never the engine thread or under the
/// service lock): its rows must follow the cache's file work in order (a row after its file is
/// written, a file deleted after its row). The connection's lock orders these statements with the
/// writer's transactions.
extension Store {
    package struct URLCacheRow: Sendable {
        package let key: String
        package let file: String
        package let size: Int
        package let response: CachedResponse
        package let lastUsed: Double

        /// The memberwise initializer, for the layers above.
        package init(key: String, file: String, size: Int, response: CachedResponse, lastUsed: Double) {
            self.key = key
            self.file = file
            self.size = size
            self.response = response
            self.lastUsed = lastUsed
        }
    }

    package func saveURLCacheRow(_ row: URLCacheRow) throws {
        let response = try StoredRows.json(row.response)
        try database.run("""
            INSERT INTO url_cache(key, file, size, response, last_used) VALUES(?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET file = excluded.file, size = excluded.size, response = excluded.response, last_used = excluded.last_used
            """, row.key, row.file, row.size, response, row.lastUsed)
    }

    /// A 304 changed the stored head; the file stays.
    package func updateURLCacheResponse(file: String, _ response: CachedResponse, lastUsed: Double) throws {
        let json = try StoredRows.json(response)
        try database.run("UPDATE url_cache SET response = ?, last_used = ? WHERE file = ?", json, lastUsed, file)
    }

    package func touchURLCacheRow(file: String, lastUsed: Double) throws {
        try database.run("UPDATE url_cache SET last_used = ? WHERE file = ?", lastUsed, file)
    }

    package func deleteURLCacheRow(file: String) throws {
        try database.run("DELETE FROM url_cache WHERE file = ?", file)
    }

    /// Every row, least recently used first; rows that no longer decode are dropped.
    package func loadURLCacheRows() throws -> [URLCacheRow] {
        try reader.run("SELECT \(StoredRows.urlCacheColumns) FROM url_cache ORDER BY last_used").compactMap(StoredRows.urlCache)
    }
}
