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
        try reader.run("SELECT id, owner, size, sha256, created_at FROM blobs WHERE id = ?", id).first.map(Self.blob)
    }

    /// Every blob row (start-up reconciliation with the folder).
    package func loadBlobs() throws -> [Blob] {
        try reader.run("SELECT id, owner, size, sha256, created_at FROM blobs").map(Self.blob)
    }

    package func deleteBlob(id: String) throws {
        try writeNow { try database.run("DELETE FROM blobs WHERE id = ?", id) }
    }

    private static func blob(_ row: Row) -> Blob {
        Blob(id: row.string(0) ?? "", size: row.int(2) ?? 0, sha256: row.string(3) ?? "",
             createdAt: Date(timeIntervalSince1970: row.double(4) ?? 0), owner: row.string(1))
    }
}
