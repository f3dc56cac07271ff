/// What the nodes of a cluster tell each other through the store (issue 19, docs/cluster.md,
/// "Where each kind of request goes"): that something they may be waiting for changed. A signal
/// carries no state, only where to look; the node reads the store for what changed, so a lost
/// or repeated signal costs a read, never a wrong answer.
package enum ClusterSignal: Sendable, Hashable {
    /// New events in a session's feed (committed).
    case feed(session: String)
    /// A task's row changed (committed).
    case task(session: String, id: Int)
    /// Many of a session's task rows changed in one commit: one signal instead of one per task.
    case tasks(session: String)
    /// A session's row changed (configuration, state): nodes that hold it read it again.
    case session(String)
    /// The queue changed: a task was queued, or a lease given up (a slot freed under the caps).
    case queue
    /// A daemon-wide setting changed over the API (`StoreOperation.saveSetting`, e.g. the rate
    /// limits): every node reads it again, so a change made through one node holds on all.
    case setting(String)
    /// A command row for the task `node` holds (`ClusterCoordinator.sendCommand`).
    case command(id: Int, node: String)
    /// A command was answered (`ClusterCoordinator.answerCommand`).
    case answer(id: Int)
}

/// What a node's listener hands over: signals in the order they were committed, or `resync`
/// after its connection was lost and made again (what was sent meanwhile is lost: the node
/// must look again at everything it waits for).
package enum ClusterHeard: Sendable, Equatable {
    case signals([ClusterSignal])
    case resync
}

/// A listener started by `ClusterCoordinator.listen`.
package protocol ClusterListening: Sendable {
    /// Stops listening and waits for the listener's thread. Idempotent.
    func stop()
}

/// A command another node asked this node to carry out on a task it holds.
package struct ClusterCommandRow: Sendable, Equatable {
    package let id: Int
    package let taskId: Int
    /// The client's tenant: the holder checks the task against it as for its own clients.
    package let owner: String?
    /// The command, in the service's encoding.
    package let command: String

    package init(id: Int, taskId: Int, owner: String?, command: String) {
        self.id = id
        self.taskId = taskId
        self.owner = owner
        self.command = command
    }
}
