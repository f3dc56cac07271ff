internal import FoundationEssentials
internal import SQLite
package import TransferModel

/// The `blobs` table (migration 2). Blob rows are written at once, not through the queued
/// writer: a 201 for an upload must mean the row is committed, and a row is tiny. The
/// connection's lock orders these statements with the writer's transactions.
extension Store {
    package func insertBlob(_ blob: Blob) throws {
        try writeNow {
            try database.run(
                "INSERT INTO blobs(id, owner, size, sha256, created_at) VALUES(?, ?, ?, ?, ?)",
                blob.id, blob.owner, blob.size, blob.sha256, blob.createdAt.timeIntervalSince1970)
        }
    }

    package func blob(id: String) throws -> Blob? {
        try reader.run("SELECT \(StoredRows.blobColumns) FROM blobs WHERE id = ?", id).first.map(StoredRows.blob)
    }

    /// Every blob row (start-up reconciliation with the folder).
    package func loadBlobs() throws -> [Blob] {
        try reader.run("SELECT \(StoredRows.blobColumns) FROM blobs").map(StoredRows.blob)
    }

    package func deleteBlob(id: String) throws {
        try writeNow { try database.run("DELETE FROM blobs WHERE id = ?", id) }
    }
}
