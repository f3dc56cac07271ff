package import TransferModel

extension TransferJob {
    /// Takes what the engine needs from the task record beyond its request: its priority (the
    /// HTTP/2 stream weight), its own rate limit and its session's connection pool.
    package mutating func adopt(_ task: TransferTask) {
        priority = task.priority.value
        bandwidthLimit = task.bandwidthLimit
        connectionPool = Session.connectionPool(session: task.sessionId, owner: task.owner)
        if task.kind == .download {
            segments = task.segments
            mirrors = task.mirrors ?? []
        }
    }
}
