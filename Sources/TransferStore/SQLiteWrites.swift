internal import SQLite

/// The SQLite store's side of the queued writer: a batch in one transaction of the write
/// connection (`Store.apply`), the probe row, and SQLite's errors read as store failures.
struct SQLiteWrites: WriteTarget {
    let database: Database

    func commit(_ operations: [StoreOperation]) throws {
        try database.transaction { tx in try Store.apply(operations, tx) }
    }

    func probe() throws {
        try database.transaction { tx in
            _ = try tx.run("""
                INSERT INTO counters(name, value) VALUES('store_probe', 1)
                ON CONFLICT(name) DO UPDATE SET value = value + 1
                """)
        }
    }

    func failure(of error: any Error) -> StoreFailure { StoreFailure(error) }

    func isRejection(_ error: any Error) -> Bool { StoreFailure.isRejection(error) }
}
