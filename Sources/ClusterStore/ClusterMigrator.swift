public import PostgreSQL

/// Brings a cluster's database to `ClusterSchema`'s newest version. Several nodes may start at
/// once: each takes the same transaction-scoped advisory lock before it reads what is applied,
/// so one applies the missing migrations and the others, once it committed, find nothing left
/// to do. A migration and the row that records it commit together.
/// - SeeAlso: https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS
public enum ClusterMigrator {
    /// The advisory lock's key: any constant of our own (the bytes of "transfrd").
    static let lockKey: Int64 = 0x7472_616E_7366_7264

    /// Applies what is missing; returns the versions it applied (empty when none was).
    @discardableResult
    public static func migrate(_ database: PostgresConnection) throws -> [Int] {
        try database.transaction { tx in
            try tx.run("SELECT pg_advisory_xact_lock($1)", lockKey)
            try tx.execute(script: """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            let applied = Set(try tx.run("SELECT version FROM schema_migrations").compactMap { $0.int(0) })
            var done: [Int] = []
            for (index, script) in ClusterSchema.migrations.enumerated() where !applied.contains(index + 1) {
                try tx.execute(script: script)
                try tx.run("INSERT INTO schema_migrations (version) VALUES ($1)", index + 1)
                done.append(index + 1)
            }
            return done
        }
    }

    /// The newest version `migrate` brings a database to.
    public static var latestVersion: Int { ClusterSchema.migrations.count }
}
