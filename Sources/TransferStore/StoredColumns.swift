package import FoundationEssentials
internal import SQLite

/// A result row as the store's decoders read it. SQLite's `Row` and PostgreSQL's `PostgresRow`
/// both are one, so a session, a task, a cookie or a credential is decoded from its columns by
/// one piece of code whichever database holds it (`StoredRows`).
package protocol StoredColumns {
    func int(_ index: Int) -> Int?
    func double(_ index: Int) -> Double?
    func string(_ index: Int) -> String?
    func data(_ index: Int) -> Data?
    func bool(_ index: Int) -> Bool?
}

extension Row: StoredColumns {}
