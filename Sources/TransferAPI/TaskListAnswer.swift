internal import Dispatch
internal import FoundationEssentials
internal import Synchronization
internal import TransferModel

/// The JSON of a long list of tasks (a batch's 201), written in parts on every core at once
/// and joined in order: the same bytes as `TransferTask.jsonList`. A batch of 10,000 tasks
/// answers about 10 MB; written on the request's thread alone it was an eighth of the batch's
/// time while the other core had nothing to do.
enum TaskListAnswer {
    /// Fewer tasks than this per part are not worth a thread.
    static let minimumPart = 512
    /// Asked once: on Linux the answer reads the cgroup's files.
    private static let cores = ProcessInfo.processInfo.activeProcessorCount

    static func json(_ tasks: [TransferTask], under key: StaticString) -> Data {
        let parts = min(Self.cores, tasks.count / minimumPart)
        guard parts > 1 else { return TransferTask.jsonList(tasks, under: key) }
        let written = Mutex([[UInt8]](repeating: [], count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let range = (tasks.count * part / parts)..<(tasks.count * (part + 1) / parts)
            let bytes = TransferTask.jsonItems(tasks[range])
            written.withLock { $0[part] = bytes }
        }
        return TransferTask.jsonList(parts: written.withLock { $0 }, under: key)
    }
}
