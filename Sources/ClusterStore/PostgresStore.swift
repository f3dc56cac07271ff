public import FoundationEssentials
package import Logging
public import PostgreSQL
internal import Synchronization
package import TransferModel
package import TransferStore

/// The store on PostgreSQL (`--database-url`): the same `TaskStore` as the SQLite `Store`, so
/// the service runs on either unchanged. Queued writes go through the same `QueuedWriter` (group
/// commit, settle, retry, health), committed by `PostgresWrites`; rows are decoded by the same
/// `StoredRows` as SQLite's.
///
/// Connections: one for the writer and the rows written at once (as SQLite's write connection),
/// `readConnections` that reads take in turn (a read never waits behind the writer's open
/// transaction: PostgreSQL's MVCC, as WAL mode is for SQLite), one that carries the heartbeats,
/// one for claims, leases and commands (`PostgresCoordinator`), and the listener's
/// (`ClusterChangeListener`, opened by the service through the coordinator). Each reconnects by itself after the server or the
/// network dropped it (`PostgresConnection`).
///
/// Partitioned as the SQLite store is: every row carries its owner (sessions, tasks, events,
/// cookies, credentials, blobs), the URL cache's key holds its partition, and the service
/// scopes every read to the requesting tenant (`StoreContractTests` holds both stores to the same
/// answers, the owner-scoped change feed among them). Its connections go only to the operator's
/// `--database-url`, never to an address a tenant chose: the network policy, which governs the
/// tenants' transfers and webhooks, does not apply to them.
package final class PostgresStore: TaskStore, QueuedWrites {
    let database: PostgresConnection
    private let readers: [PostgresConnection]
    private let turn = Atomic<Int>(0)
    /// The connection that carries the heartbeats.
    private let membership: PostgresConnection
    /// Claims, leases and shared numbers (`PostgresCoordinator`), on a connection of their own.
    private let coordination: PostgresConnection
    package let writer: QueuedWriter
    package let location: String
    /// For the listener's connection.
    private let url: String
    /// What every session of this process is named on the server (`application_name`): a name
    /// of this process alone, written into its registry row at registration, so the other nodes
    /// can end this process's sessions once it falls silent (`ClusterNodes.endSessions`).
    package let instance: String
    /// Run on each new session of this process, after a reconnect too.
    private let setup: String

    /// Reads at once: the HTTP workers' body and metrics reads, and start-up loads.
    static let readConnections = 2

    /// Connects to `url` and brings its schema to the newest version (`ClusterMigrator`, safe
    /// when several nodes start at once). A session's feed keeps its newest `eventRetention`
    /// events.
    ///
    /// `transactionIdleTimeout` (seconds): the server ends a session of this node that waits
    /// inside a transaction longer than that (`idle_in_transaction_session_timeout`). A node
    /// frozen mid-transaction (SIGSTOP, a VM paused, a partition) would otherwise keep its row
    /// and advisory locks, and the other nodes' requeues, claims and commands on its tasks would
    /// wait for it however long it stays frozen. The node's own statements never idle that long
    /// inside a transaction; when it wakes, its connection is made again and the writer retries.
    /// What a frozen node holds outside a transaction (a tenant's creation turn, its listener) is
    /// ended by the others through the `instance` name (`ClusterNodes.endSessions`).
    package init(url: String, instruments: (any StoreInstruments)?, logger: Logger, eventRetention: Int = 10_000,
                 transactionIdleTimeout: Double = 5) throws {
        let instance = Self.newInstanceName()
        let setup = "SET idle_in_transaction_session_timeout = \(max(1, Int(transactionIdleTimeout * 1_000))); "
            + "SET application_name = '\(instance)'"
        let database = try PostgresConnection(url: url, setup: setup)
        var opened = [database]
        do {
            let membership = try PostgresConnection(url: url, setup: setup)
            opened.append(membership)
            try ClusterMigrator.migrate(database)
            readers = try (0..<Self.readConnections).map { _ in
                let reader = try PostgresConnection(url: url, setup: setup)
                opened.append(reader)
                return reader
            }
            coordination = try PostgresConnection(url: url, setup: setup)
            opened.append(coordination)
            self.membership = membership
        } catch {
            for connection in opened { connection.close() }
            throw error
        }
        self.database = database
        self.url = url
        self.instance = instance
        self.setup = setup
        location = database.displayURL
        writer = QueuedWriter(target: PostgresWrites(database: database, eventRetention: eventRetention), instruments: instruments, logger: logger)
    }

    /// The nodes' registry, on the membership connection (otherwise idle).
    package var nodeRegistry: (any NodeRegistry)? { PostgresNodeRegistry(database: membership, instance: instance) }

    package var coordinator: (any ClusterCoordinator)? {
        PostgresCoordinator(database: coordination, readers: self, url: url, setup: setup, instance: instance)
    }

    /// "transferd/" and 16 random hex digits: unique per process start (a node restarted with
    /// the same id is another instance, so its predecessor's sessions can be told apart), and
    /// well inside the server's 63 bytes.
    static func newInstanceName() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = String(generator.next(), radix: 16)
        return "transferd/" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Runs one read on the next read connection. What PostgreSQL throws (the server down, the
    /// connection dropped: the next read makes it again) is a `StoreReadFailure`, which the API
    /// answers with 503.
    func read(_ sql: String, _ parameters: any PostgresBindable...) throws(StoreReadFailure) -> [PostgresRow] {
        do {
            return try nextReader().run(sql, parameters: parameters)
        } catch {
            throw StoreReadFailure(reason: "PostgreSQL \(error.sqlState.isEmpty ? "connection" : error.sqlState): \(error.message)")
        }
    }

    /// The read connection whose turn it is (for a few reads in a row, `ClusterOverviewQueries`).
    func nextReader() -> PostgresConnection {
        let (index, _) = turn.wrappingAdd(1, ordering: .relaxed)
        return readers[index % readers.count]
    }

    /// Commits what is pending and closes every connection.
    /// Idempotent.
    package func close() {
        writer.close()
        for reader in readers { reader.close() }
        database.close()
        coordination.close()
        membership.close()
    }
}
