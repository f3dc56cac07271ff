internal import SQLite
internal import Synchronization

/// The store's read connections, beside its one write connection. In WAL mode SQLite lets
/// readers run while the writer's transaction is open: a read sees the last commit made before
/// it began and never waits for the batch being written (GRDB's `DatabasePool` works the same
/// way). So a response body, a task's metrics or a start-up load never queue behind a commit.
///
/// Each connection has its own lock and reads take them in turn: at most `count` reads run at
/// once, and a slow read holds up only the reads that land on its connection.
///
/// No new store and no network: they read the rows the writer wrote, each carrying its owner,
/// and every caller scopes what it reads to the requesting tenant as before (`TaskStore`).
final class ReadConnections: Sendable {
    private let connections: [Database]
    private let turn = Atomic<Int>(0)

    /// Opens `count` connections to the database at `path`, which the writer has created and
    /// put in WAL mode already.
    init(path: String, count: Int) throws {
        precondition(count > 0)
        connections = try (0..<count).map { _ in
            let connection = try Database(path: path)
            // Reads only: a write here would bypass the writer's queue and its ordering.
            try connection.execute(script: "PRAGMA query_only=1;")
            return connection
        }
    }

    /// The connection for the next read.
    var next: Database {
        let (index, _) = turn.wrappingAdd(1, ordering: .relaxed)
        return connections[index % connections.count]
    }

    func close() {
        for connection in connections { connection.close() }
    }
}
