import Foundation
import SQLite
import TestSupport
import Testing

/// The connection's statement cache, which finds a long SQL text's statement by where the text
/// is stored: a text built per call, freed, and another of the same length stored at the same
/// address must still run as itself.
@Suite struct DatabaseStatementCacheTests {
    @Test func textsBuiltPerCallRunAsThemselvesWhereverTheyAreStored() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let database = try Database(path: folder.path + "/cache.sqlite3")
        defer { database.close() }
        // 200 texts of one length (more than the addressed cache holds), each built anew on
        // every run, so the allocator hands freed storage to the next; run in rounds so that
        // each text meets addresses another one had.
        for round in 0..<3 {
            for n in 100..<300 {
                let sql = String("SELECT ? + \(n) AS a_name_long_enough_to_be_stored")
                let sum = try database.run(sql, round).first?.int(0)
                #expect(sum == n + round, "\(sql) with \(round)")
            }
        }
        // A constant text keeps its statement across the rounds of the others.
        let constant = "SELECT ? * 2 AS another_name_long_enough_to_be_stored"
        for value in 0..<50 {
            let doubled = try database.run(constant, value).first?.int(0)
            #expect(doubled == value * 2)
            let other = try database.run(String("SELECT ? * 3 AS another_name_long_enough_to_be_stored"), value).first?.int(0)
            #expect(other == value * 3)
        }
    }
}
