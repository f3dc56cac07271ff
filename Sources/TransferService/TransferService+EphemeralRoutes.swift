package import FoundationEssentials
internal import Logging
internal import TransferModel
internal import TransferStore
internal import Synchronization

/// Ephemeral sessions in a cluster (issue 19). Such a session and its tasks live only in the
/// memory of the node that made them (never stored: nothing of them reaches a disk, the shared
/// database's included), so the other nodes learn only where they are (`EphemeralRoutes`: ids
/// and a node) and pass a request for them on to that node (`NodeForwarding`), which answers it
/// under the same token checks as its own clients' requests. A daemon alone does none of this.
extension TransferService {
    /// Names this node as the holder of ephemeral session `session` and its new tasks `tasks`,
    /// after they were created (outside the lock). A failed write is logged: only this node
    /// answers for them until it registers again (`routeEveryEphemeral`).
    func routeEphemeral(session: String, tasks: [Int]) {
        guard let coordinator = store.coordinator, let node = membership.nodeId else { return }
        do {
            try coordinator.routeEphemeral(session: session, tasks: tasks, node: node)
        } catch {
            logger.warning("an ephemeral session's route could not be written; other nodes answer 404 for it",
                           metadata: ["transfer.session.id": "\(session)", "error": "\(error)"])
        }
    }

    /// Routes every ephemeral session and task this node holds again: after it registered,
    /// which drops the routes its previous registration had (it may have been forgotten as dead
    /// while it was only stopped; a restarted process holds none).
    func routeEveryEphemeral() {
        let held = state.withLock { s in
            s.sessions.values.filter { $0.kind == .ephemeral }.map { ($0.id, s.tasksBySession[$0.id] ?? []) }
        }
        for (session, tasks) in held { routeEphemeral(session: session, tasks: tasks) }
    }

    /// The address of the live node, other than this one, that holds ephemeral session
    /// `session` (or task `task`); nil for a daemon alone, when no other node does, or when the
    /// store cannot be read (the caller's 404 then stands).
    public func ephemeralHolder(session: String?, task: Int?) -> String? {
        guard let coordinator = store.coordinator, let node = membership.nodeId else { return nil }
        return try? coordinator.ephemeralHolder(session: session, task: task, except: node, liveWithin: configuration.leaseTimeout)
    }

    /// The addresses of the other live nodes that hold ephemeral sessions (for a list of
    /// sessions, which asks each of them for its own); empty for a daemon alone. Throws when
    /// the store cannot be read.
    public func otherEphemeralHolders() throws -> [String] {
        guard let coordinator = store.coordinator, let node = membership.nodeId else { return [] }
        do {
            return try coordinator.ephemeralHolders(except: node, liveWithin: configuration.leaseTimeout)
        } catch {
            throw StoreReadFailure(reason: "the nodes that hold ephemeral sessions cannot be read: \(error)")
        }
    }

    /// Runs `body` on a thread of its own, where it may `fetch` from other nodes: never on an
    /// HTTP worker, which answers later. False, and nothing run, when too many such threads
    /// run already (`NodeForwarding.maxThreads`).
    package func onExchangeThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        nodeForwarding.onThread(body)
    }

    /// `exchange` sent to the node at `address` on this thread (one of `onExchangeThread`'s),
    /// with its whole answer; one longer than `limit` bytes is a failure.
    package func fetch(_ exchange: NodeForwarding.Exchange, from address: String, limit: Int) throws(NodeForwarding.Failure) -> (status: Int, body: Data) {
        try nodeForwarding.fetch(exchange, from: address, limit: limit)
    }

    /// Passes `exchange` on to the node at `address`; `sink` hears its answer on the exchange's
    /// own thread.
    package func forward(_ exchange: NodeForwarding.Exchange, to address: String, sink: any ForwardedAnswerSink) {
        nodeForwarding.forward(exchange, to: address, sink: sink)
    }
}
