import Foundation
import Testing
import TestSupport
@testable import PostgreSQL

/// The PostgreSQL layer against the real server `scripts/test.sh` starts (initdb on 127.0.0.1):
/// every value type through parameters and back, no value spliced into SQL, transactions, errors
/// with their SQLSTATE, a refused connection, LISTEN/NOTIFY, and the SKIP LOCKED claim the
/// cluster's nodes will take queued work with (issue 19). Each test works in a table of its own.
@Suite struct PostgresConnectionTests {
    private static func connect() throws -> PostgresConnection {
        try PostgresConnection(url: try Peers.postgres())
    }

    /// A table name no other test (or run) uses.
    private static func table(_ name: String) -> String {
        "\(name)_\(UInt32.random(in: 0...UInt32.max))"
    }

    @Test func everyTypeGoesInAsAParameterAndComesBackTyped() throws {
        let db = try Self.connect()
        defer { db.close() }
        let table = Self.table("types")
        try db.execute(script: "CREATE TABLE \(table) (id bigint PRIMARY KEY, n bigint, x double precision, b boolean, t text, d bytea)")
        defer { _ = try? db.run("DROP TABLE \(table)") }
        let bytes = Data([0, 1, 0x5c, 0x27, 0x22, 0x7f, 0x80, 0xff] + Array(repeating: 0x41, count: 70_000))
        try db.run("INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5, $6)", 1, Int64.max, 0.1, true, "zwölf \u{1F600} 'quoted'", bytes)
        try db.run("INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5, $6)", 2, Int64.min, -Double.infinity, false, "", Data())
        try db.run("INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5, $6)", 3, Int?.none, Double?.none, Bool?.none, String?.none, Data?.none)

        let rows = try db.run("SELECT n, x, b, t, d FROM \(table) ORDER BY id")
        #expect(rows.count == 3)
        #expect(rows[0].int(0) == Int.max && rows[0].double(1) == 0.1 && rows[0].bool(2) == true)
        #expect(rows[0].string(3) == "zwölf \u{1F600} 'quoted'" && rows[0].data(4) == bytes)
        #expect(rows[1].int(0) == Int.min && rows[1].double(1) == -.infinity && rows[1].bool(2) == false)
        #expect(rows[1].string(3) == "" && rows[1].data(4) == Data())
        #expect((0..<5).allSatisfy { rows[2].isNull($0) })
        // Another type reads as its text; a count as an integer.
        #expect(try db.run("SELECT 12.50::numeric, count(*) FROM \(table)").first?.values == [.text("12.50"), .integer(3)])
    }

    @Test func aValueIsNeverSplicedIntoTheStatement() throws {
        let db = try Self.connect()
        defer { db.close() }
        let table = Self.table("splice")
        try db.execute(script: "CREATE TABLE \(table) (t text)")
        defer { _ = try? db.run("DROP TABLE \(table)") }
        let hostile = "x'); DROP TABLE \(table); --"
        try db.run("INSERT INTO \(table) VALUES ($1)", hostile)
        #expect(try db.run("SELECT t FROM \(table) WHERE t = $1", hostile).first?.string(0) == hostile)
    }

    @Test func aTransactionCommitsWholeOrNotAtAll() throws {
        let db = try Self.connect()
        defer { db.close() }
        let table = Self.table("tx")
        try db.execute(script: "CREATE TABLE \(table) (id bigint PRIMARY KEY)")
        defer { _ = try? db.run("DROP TABLE \(table)") }
        try db.transaction { tx in
            try tx.run("INSERT INTO \(table) VALUES ($1)", 1)
            try tx.run("INSERT INTO \(table) VALUES ($1)", 2)
        }
        // The second row breaks the unique key: the first one of that transaction goes too.
        #expect(throws: PostgresError.self) {
            try db.transaction { tx in
                try tx.run("INSERT INTO \(table) VALUES ($1)", 3)
                try tx.run("INSERT INTO \(table) VALUES ($1)", 1)
            }
        }
        do {
            try db.run("INSERT INTO \(table) VALUES ($1)", 2)
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(error.isUniqueViolation && error.sqlState == "23505", "\(error)")
            #expect(error.message.contains("duplicate key"), "\(error)")
        }
        #expect(try db.run("SELECT id FROM \(table) ORDER BY id").compactMap { $0.int(0) } == [1, 2])
        // The connection is usable after each failure, and a syntax error says so.
        do {
            try db.run("SELEKT 1")
            Issue.record("a syntax error was accepted")
        } catch {
            #expect(error.sqlState == "42601" && !error.isConnectionFailure, "\(error)")
        }
        #expect(try db.run("SELECT 1").first?.int(0) == 1)
    }

    @Test func aRefusedConnectionIsAClearErrorWithoutThePassword() throws {
        let refusing = try RefusingPort()
        defer { refusing.close() }
        do {
            _ = try PostgresConnection(url: "postgresql://user:s3cret@127.0.0.1:\(refusing.port)/db?connect_timeout=5")
            Issue.record("connected to a port that refuses")
        } catch {
            #expect(error.isConnectionFailure, "\(error)")
            #expect(error.context.contains("user:***@127.0.0.1") && !error.description.contains("s3cret"), "\(error)")
        }
        #expect(PostgresConnection.withoutPassword("postgresql://u@h:1/d") == "postgresql://u@h:1/d")
        #expect(PostgresConnection.withoutPassword("host=h user=u") == "host=h user=u")
    }

    /// A statement is prepared once per connection and run by name after; a session that lost
    /// its prepared statements (DEALLOCATE ALL, as a pooler may do) runs it again, prepared anew;
    /// a bytea parameter first bound as NULL takes its type from its column, so bytes bind later.
    @Test func aStatementIsPreparedOnceAndOutlivesTheServerForgettingIt() throws {
        let db = try Self.connect()
        defer { db.close() }
        for n in 1...5 { #expect(try db.run("SELECT $1::bigint + 1", n).first?.int(0) == n + 1) }
        #expect(try db.run("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", "SELECT $1::bigint + 1").first?.int(0) == 1)
        try db.execute(script: "DEALLOCATE ALL")
        #expect(try db.run("SELECT $1::bigint + 1", 41).first?.int(0) == 42)
        #expect(try db.run("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", "SELECT $1::bigint + 1").first?.int(0) == 1)

        let table = Self.table("prepared")
        try db.execute(script: "CREATE TABLE \(table) (id bigint, b bytea)")
        defer { _ = try? db.run("DROP TABLE \(table)") }
        try db.run("INSERT INTO \(table) (id, b) VALUES ($1, $2)", 1, Data?.none)
        try db.run("INSERT INTO \(table) (id, b) VALUES ($1, $2)", 2, Data([0, 1, 255]))
        #expect(try db.run("SELECT b FROM \(table) ORDER BY id").map(\.values) == [[.null], [.bytes(Data([0, 1, 255]))]])
    }

    /// A connection the server ends (a restart, a failover, an idle timeout) fails the statement
    /// it was in, clearly, and the next statement connects again.
    @Test func aDroppedConnectionIsMadeAgainForTheNextStatement() throws {
        let db = try Self.connect(), admin = try Self.connect()
        defer { db.close(); admin.close() }
        let pid = try #require(try db.run("SELECT pg_backend_pid()").first?.int(0))
        // pg_terminate_backend waits (up to 5 s) for the process to end.
        #expect(try admin.run("SELECT pg_terminate_backend($1, 5000)", pid).first?.bool(0) == true)
        do {
            try db.run("SELECT 1")
            Issue.record("a statement on a terminated connection succeeded")
        } catch {
            #expect(error.isConnectionFailure || error.sqlState == "57P01", "\(error)")
        }
        #expect(try db.run("SELECT 2").first?.int(0) == 2)
        #expect(try db.run("SELECT pg_backend_pid()").first?.int(0) != pid)

        // Lost inside a transaction: a statement the body runs after the failure (one it
        // caught) does not run, on a new connection, outside the transaction.
        let table = Self.table("lost")
        try db.execute(script: "CREATE TABLE \(table) (id bigint)")
        defer { _ = try? db.run("DROP TABLE \(table)") }
        #expect(throws: PostgresError.self) {
            try db.transaction { tx in
                try tx.run("INSERT INTO \(table) VALUES (1)")
                let inside = try #require(try tx.run("SELECT pg_backend_pid()").first?.int(0))
                _ = try admin.run("SELECT pg_terminate_backend($1, 5000)", inside)
                _ = try? tx.run("INSERT INTO \(table) VALUES (2)")
                try tx.run("INSERT INTO \(table) VALUES (3)")
            }
        }
        #expect(try db.run("SELECT count(*) FROM \(table)").first?.int(0) == 0)
    }

    /// A session frozen inside a transaction (a node stopped with SIGSTOP) is ended by the
    /// server once `idle_in_transaction_session_timeout` (its `setup`) passes: its row lock no
    /// longer holds the others up. When it wakes, its next statement fails and the one after
    /// reconnects, with its setup run again.
    @Test func aSessionIdleInATransactionIsEndedAndItsSetupOutlivesTheReconnect() throws {
        let server = try Peers.postgres()
        let frozen = try PostgresConnection(url: server, setup: "SET idle_in_transaction_session_timeout = 500")
        let other = try PostgresConnection(url: server, setup: "SET lock_timeout = 10000")
        defer { frozen.close(); other.close() }
        #expect(try frozen.run("SHOW idle_in_transaction_session_timeout").first?.string(0) == "500ms")
        let table = Self.table("frozen")
        try other.execute(script: "CREATE TABLE \(table) (id bigint PRIMARY KEY, n bigint); INSERT INTO \(table) VALUES (1, 0)")
        defer { _ = try? other.run("DROP TABLE \(table)") }
        try frozen.execute(script: "BEGIN; UPDATE \(table) SET n = 1 WHERE id = 1")

        // Another session's write of the same row waits for the frozen one's end, not 10 s.
        let started = Date()
        try other.run("UPDATE \(table) SET n = 2 WHERE id = 1")
        #expect(Date().timeIntervalSince(started) < 5)
        // The frozen transaction's write is gone with its session.
        #expect(try other.run("SELECT n FROM \(table) WHERE id = 1").first?.int(0) == 2)

        #expect(throws: PostgresError.self) { try frozen.run("SELECT 1") }
        #expect(try frozen.run("SHOW idle_in_transaction_session_timeout").first?.string(0) == "500ms")
    }

    @Test func aListenerGetsWhatAnotherConnectionNotifies() throws {
        let listener = try Self.connect(), sender = try Self.connect()
        defer { listener.close(); sender.close() }
        let channel = Self.table("channel")
        try listener.execute(script: "LISTEN \(channel)")
        #expect(try listener.notifications(timeout: 0.1).isEmpty)
        try sender.run("SELECT pg_notify($1, $2)", channel, "task 42 changed")
        var received: [PostgresNotification] = []
        let deadline = Date().addingTimeInterval(10)
        while received.isEmpty && Date() < deadline { received = try listener.notifications(timeout: 1) }
        #expect(received.map(\.channel) == [channel] && received.first?.payload == "task 42 changed", "\(received)")
        #expect(received.first.map { $0.senderPID > 0 } == true)
    }

    /// Two nodes claiming queued work at once each get their own row, in order, without waiting
    /// for the other's transaction: `FOR UPDATE SKIP LOCKED` (the claim of River, Oban, pg-boss).
    @Test func twoClaimsAtOnceTakeDifferentRows() throws {
        let first = try Self.connect(), second = try Self.connect()
        defer { first.close(); second.close() }
        let table = Self.table("queue")
        try first.execute(script: "CREATE TABLE \(table) (id bigint PRIMARY KEY, priority int NOT NULL)")
        defer { _ = try? first.run("DROP TABLE \(table)") }
        for (id, priority) in [(1, 1), (2, 5), (3, 9)] { try first.run("INSERT INTO \(table) VALUES ($1, $2)", id, priority) }
        let claim = "SELECT id FROM \(table) ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED"
        let (mine, theirs) = try first.transaction { tx in
            let mine = try tx.run(claim).first?.int(0)
            // While the first holds its row, the second's claim skips it instead of waiting.
            let theirs = try second.transaction { other in try other.run(claim).first?.int(0) }
            return (mine, theirs)
        }
        #expect(mine == 3 && theirs == 2)
    }
}
