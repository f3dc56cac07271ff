internal import Dispatch
internal import Glibc
internal import Synchronization
internal import PostgreSQL
package import TransferStore

/// Listens for `ClusterSignal`s (`ClusterChange`) on a connection of its own, on a thread of its own, and hands
/// each batch to `handle`. When the connection is lost it connects again (every `retryDelay`
/// until it can) and then hands over `.resync`: what was sent meanwhile is lost (NOTIFY is not
/// queued for a listener that is away), so the node must look at everything it waits for.
///
/// Execution context: one serial queue per node, `transferd.cluster.listener`, whose one work
/// item is the listening loop (it blocks in poll(2) between notifications, like the store
/// writer blocks on the disk); `handle` runs there and must not block for long (it wakes
/// long-polls, which answer on their own threads).
package final class ClusterChangeListener: ClusterListening {
    private let url: String
    private let setup: String?
    private let handle: @Sendable (ClusterHeard) -> Void
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let retryDelay: Double

    /// Starts listening; `handle` gets every batch of changes (in the order sent) until `stop()`
    /// (the loop keeps the listener alive until then).
    /// `setup` runs on each of its sessions (`PostgresConnection`).
    package init(url: String, setup: String? = nil, retryDelay: Double = 1, handle: @escaping @Sendable (ClusterHeard) -> Void) throws {
        self.url = url
        self.setup = setup
        self.handle = handle
        self.retryDelay = retryDelay
        let first = try Self.listen(url, setup: setup)  // fails here, not on the thread, when the database is not there
        DispatchQueue(label: "transferd.cluster.listener").async { [self] in run(first) }
    }

    /// Stops the loop and waits for it (at most one poll interval, or one retry delay). Idempotent.
    package func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        done.wait()
    }

    private static let pollInterval = 0.2

    private static func listen(_ url: String, setup: String?) throws -> PostgresConnection {
        let connection = try PostgresConnection(url: url, setup: setup)
        try connection.execute(script: "LISTEN \(ClusterChange.channel)")
        return connection
    }

    private func run(_ first: PostgresConnection) {
        var connection: PostgresConnection? = first
        while !stopping.load(ordering: .relaxed) {
            guard let live = connection else {
                usleep(useconds_t(retryDelay * 1_000_000))
                connection = try? Self.listen(url, setup: setup)
                if connection != nil { handle(.resync) }
                continue
            }
            do {
                let received = try live.notifications(timeout: Self.pollInterval)
                let signals = received.filter { $0.channel == ClusterChange.channel }.compactMap { ClusterChange.signal(payload: $0.payload) }
                if !signals.isEmpty { handle(.signals(signals)) }
            } catch {
                live.close()
                connection = nil
            }
        }
        connection?.close()
        done.signal()
    }
}
