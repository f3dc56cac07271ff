internal import FoundationEssentials
internal import PostgreSQL
package import TransferModel
package import TransferStore

/// The rows written at once, not through the queued writer (their API answer waits for them
/// anyway), as SQLite's `Store+Credentials`, `Store+URLCache` and `Store+Blobs` write them: on
/// the write connection, whose lock orders them with the writer's transactions. Each carries its
/// owner; the URL cache's key holds its partition (`CachePartition`).
extension PostgresStore {
    // MARK: credentials (passwords sealed by `CredentialVault` before they get here)

    package func loadCredentialRows() throws -> [Store.CredentialRow] {
        try read("SELECT \(StoredRows.credentialColumns) FROM credentials ORDER BY position").compactMap(StoredRows.credential)
    }

    /// Replaces the row of the same owner, space and user (`IS NOT DISTINCT FROM` compares a
    /// null realm too).
    package func replaceCredential(_ row: Store.CredentialRow) throws {
        try writeNow {
            try database.transaction { tx in
                try Self.deleteCredential(owner: row.ownerKey, space: row.space, user: row.user, tx)
                try tx.run("""
                    INSERT INTO credentials (owner, host, port, protocol, realm, authentication_method, user_name, password)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                    """, row.ownerKey, row.space.host, row.space.port, row.space.protocol.rawValue, row.space.realm,
                    row.space.authenticationMethod.rawValue, row.user, row.sealedPassword)
            }
        }
    }

    package func deleteCredentials(owner: String, _ ids: [Credential.ID]) throws {
        guard !ids.isEmpty else { return }
        try writeNow {
            try database.transaction { tx in
                for id in ids { try Self.deleteCredential(owner: owner, space: id.space, user: id.user, tx) }
            }
        }
    }

    private static func deleteCredential(owner: String, space: ProtectionSpace, user: String, _ tx: PostgresConnection.Transaction) throws {
        try tx.run("""
            DELETE FROM credentials WHERE owner = $1 AND host = $2 AND port = $3 AND protocol = $4 AND realm IS NOT DISTINCT FROM $5
            AND authentication_method = $6 AND user_name = $7
            """, owner, space.host, space.port, space.protocol.rawValue, space.realm, space.authenticationMethod.rawValue, user)
    }

    // MARK: the URL cache's index (written by the cache's own queue, in order with its files)

    package func loadURLCacheRows() throws -> [Store.URLCacheRow] {
        try read("SELECT \(StoredRows.urlCacheColumns) FROM url_cache ORDER BY last_used").compactMap(StoredRows.urlCache)
    }

    package func saveURLCacheRow(_ row: Store.URLCacheRow) throws {
        try database.run("""
            INSERT INTO url_cache (key, file, size, response, last_used) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (key) DO UPDATE SET file = excluded.file, size = excluded.size, response = excluded.response, last_used = excluded.last_used
            """, row.key, row.file, row.size, try StoredRows.json(row.response), row.lastUsed)
    }

    package func updateURLCacheResponse(file: String, _ response: CachedResponse, lastUsed: Double) throws {
        try database.run("UPDATE url_cache SET response = $1, last_used = $2 WHERE file = $3", try StoredRows.json(response), lastUsed, file)
    }

    package func touchURLCacheRow(file: String, lastUsed: Double) throws {
        try database.run("UPDATE url_cache SET last_used = $1 WHERE file = $2", lastUsed, file)
    }

    package func deleteURLCacheRow(file: String) throws {
        try database.run("DELETE FROM url_cache WHERE file = $1", file)
    }

    // MARK: blobs (content in <data>/blobs)

    package func loadBlobs() throws -> [Blob] {
        try read("SELECT \(StoredRows.blobColumns) FROM blobs").map(StoredRows.blob)
    }

    package func blob(id: String) throws -> Blob? {
        try read("SELECT \(StoredRows.blobColumns) FROM blobs WHERE id = $1", id).first.map(StoredRows.blob)
    }

    package func insertBlob(_ blob: Blob) throws {
        try writeNow {
            try database.run("INSERT INTO blobs (id, owner, size, sha256, created_at) VALUES ($1, $2, $3, $4, $5)",
                             blob.id, blob.owner, blob.size, blob.sha256, blob.createdAt.timeIntervalSince1970)
        }
    }

    package func deleteBlob(id: String) throws {
        try writeNow { try database.run("DELETE FROM blobs WHERE id = $1", id) }
    }
}

extension PostgresRow: StoredColumns {}
