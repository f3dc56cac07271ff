internal import Dispatch
internal import FoundationEssentials
internal import Synchronization

/// The stored forms of many new tasks (a batch's rows), written in parts on every core at once.
/// Why: a batch of 10,000 tasks is about 10 MB of records, written inside the writer's
/// transaction while its client waits and the machine's other cores idle; on one thread it was
/// a tenth of the batch's time.
extension Store {
    /// Fewer rows than this per part are not worth a thread.
    static let minimumRecordPart = 512
    /// Asked once: on Linux the answer reads the cgroup's files, a cost no single POST should pay.
    private static let cores = ProcessInfo.processInfo.activeProcessorCount

    /// `json(task)` of each row, in order.
    static func records(of rows: [StoreOperation.TaskRow]) -> [String] {
        let parts = min(Self.cores, rows.count / minimumRecordPart)
        guard parts > 1 else { return rows.map { json($0.task) } }
        let written = Mutex([[String]](repeating: [], count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let range = (rows.count * part / parts)..<(rows.count * (part + 1) / parts)
            let records = rows[range].map { json($0.task) }
            written.withLock { $0[part] = records }
        }
        return written.withLock { $0.flatMap { $0 } }
    }
}
