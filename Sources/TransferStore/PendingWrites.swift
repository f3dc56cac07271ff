internal import TransferModel

/// The store's writes that are not committed yet, in the order they were queued, each named by
/// a sequence number. Owned by `Store` under a mutex; the writer takes them all for one
/// transaction and, when the transaction fails, puts them back in front of what was queued
/// meanwhile, so writes always commit in queue order and a write that is not here is committed,
/// withdrawn or rejected.
struct PendingWrites: Sendable {
    /// One queued write.
    struct Write: Sendable {
        let seq: Int
        let operation: StoreOperation
    }

    private(set) var items: [Write] = []
    /// The sequence number of the last write queued (0 before any).
    private(set) var lastSeq = 0
    /// Writes the database refused for good (`StoreFailure.isRejection`), until `settle` asks.
    /// Bounded: a rejection is a bug, and only a creation waiting in `settle` asks about one.
    private var rejected: Set<Int> = []
    private static let rejectedLimit = 1024

    mutating func append(_ operation: StoreOperation) -> Int {
        lastSeq += 1
        items.append(Write(seq: lastSeq, operation: operation))
        return lastSeq
    }

    /// Everything pending, for one transaction, coalesced: a task saved at its start, at its
    /// response and at its completion within one commit is encoded and written once.
    mutating func takeAll() -> [Write] {
        coalesce()
        defer { items.removeAll(keepingCapacity: true) }
        return items
    }

    /// A batch that did not commit goes back before the writes queued while it was tried, and
    /// the queue is coalesced, so a long outage holds one row per task rather than one per
    /// progress checkpoint.
    mutating func putBack(_ batch: some Collection<Write>) {
        items.insert(contentsOf: batch, at: 0)
        coalesce()
    }

    /// Keeps one `.saveTask` per task: in the first one's place (a row the task's later writes
    /// may need, a body's foreign key, exists as early as before) with the newest one's content
    /// (the writer keeps the newest version anyway, and of equal versions the first, as here).
    /// Never across a `.deleteTask` of the task.
    /// The absorbed writes' sequence numbers go; no creation waits on a `.saveTask`.
    ///
    /// Read in place first: when no save is absorbed (most commits), nothing is copied. Copying
    /// every write into a new array, and each task out of its operation to compare versions, was
    /// 4% of the store writer's instructions per 16 KiB download (callgrind).
    mutating func coalesce() {
        var firstSave: [Int: Int] = [:]  // task id -> index of its first save since any delete
        var content: [Int: Int] = [:]  // index of a first save -> index of the save it keeps
        var absorbed: [Int] = []
        for index in items.indices {
            switch items[index].operation {
            case .saveTask(let task, _, _, _):
                guard let first = firstSave[task.id] else {
                    firstSave[task.id] = index
                    continue
                }
                absorbed.append(index)
                // The newest version wins; of equal versions, the first.
                if Self.version(at: content[first] ?? first, in: items) < task.version { content[first] = index }
            case .deleteTask(let id):
                firstSave[id] = nil
            default:
                break
            }
        }
        guard !absorbed.isEmpty else { return }
        for (first, newest) in content { items[first] = Write(seq: items[first].seq, operation: items[newest].operation) }
        let gone = Set(absorbed)
        var kept: [Write] = []
        kept.reserveCapacity(items.count - gone.count)
        for index in items.indices where !gone.contains(index) { kept.append(items[index]) }
        items = kept
    }

    private static func version(at index: Int, in items: [Write]) -> Int {
        if case .saveTask(let task, _, _, _) = items[index].operation { return task.version }
        return .min
    }

    /// Whether write `seq` is still waiting to be committed.
    func contains(_ seq: Int) -> Bool {
        items.contains { $0.seq == seq }
    }

    /// Whether any write queued up to and including `seq` is still waiting.
    func containsAny(through seq: Int) -> Bool {
        items.first.map { $0.seq <= seq } ?? false
    }

    mutating func reject(_ seq: Int) {
        if rejected.count >= Self.rejectedLimit, let oldest = rejected.min() { rejected.remove(oldest) }
        rejected.insert(seq)
    }

    /// Whether write `seq` was rejected (forgotten once asked).
    mutating func takeRejection(_ seq: Int) -> Bool {
        rejected.remove(seq) != nil
    }

    /// Replaces each pending operation by `transform`'s result, dropping those it maps to nil.
    mutating func withdraw(_ transform: (StoreOperation) -> StoreOperation?) {
        items = items.compactMap { write in transform(write.operation).map { Write(seq: write.seq, operation: $0) } }
    }
}
