/// The stored forms of many new tasks (a batch's rows), written in parts on every core at once.
/// Why: a batch of 10,000 tasks is about 10 MB of records, written inside the writer's
/// transaction while its client waits and the machine's other cores idle; on one thread it was
/// a tenth of the batch's time.
extension Store {
    /// Fewer rows than this per part are not worth a thread.
    static let minimumRecordPart = 512

    /// `record(task)` of each row, in order.
    package static func records(of rows: [StoreOperation.TaskRow]) -> [StoredRecord] {
        PartsOnEveryCore.map(rows, minimumPart: minimumRecordPart) { part in part.map { record($0.task) } }.flatMap { $0 }
    }
}
