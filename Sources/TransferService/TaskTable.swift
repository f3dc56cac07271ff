/// The service's tasks by id, each entry in a box of its own: a dictionary of 16-byte slots
/// (id and box) instead of one of whole entries.
///
/// Why: a Swift dictionary keeps its load at most 0.75 and doubles its slots, so 100,000 tasks
/// take 262,144 slots. With the entry inline every empty slot cost a whole entry (~600 bytes):
/// 1.6 KiB per queued task for the table alone (docs/benchmarks.md, "Where a queued task's
/// memory goes"). Boxed, an empty slot costs 16 bytes.
///
/// A value like the dictionary it replaces: a box is changed in place only while this table is
/// its one holder, else the entry is copied into a new box first (a copy of the state never
/// sees a later change).
struct TaskTable: Sendable {
    private var boxes: [Int: TaskEntryBox] = [:]

    init() {}

    subscript(id: Int) -> TaskEntry? {
        // Lent, not copied: `tasks[id]?.task.state` reads one field of the entry in its box
        // instead of retaining and releasing each of its references in a copy.
        _read {
            if let box = boxes[id] { yield box.entry } else { yield nil }
        }
        set {
            guard let newValue else {
                boxes[id] = nil
                return
            }
            if let index = boxes.index(forKey: id), isKnownUniquelyReferenced(&boxes.values[index]) {
                boxes.values[index].entry = newValue
            } else {
                boxes[id] = TaskEntryBox(newValue)
            }
        }
        // In place, so a change to an entry's array (its transactions) does not copy the array;
        // one hash lookup (the index), however many steps use the slot.
        _modify {
            guard let index = boxes.index(forKey: id) else {
                var added: TaskEntry?
                yield &added
                if let added { boxes[id] = TaskEntryBox(added) }
                return
            }
            if !isKnownUniquelyReferenced(&boxes.values[index]) { boxes.values[index] = TaskEntryBox(boxes.values[index].entry!) }
            let box = boxes.values[index]
            yield &box.entry
            if box.entry == nil { boxes.remove(at: index) }
        }
    }

    var count: Int { boxes.count }
    func contains(_ id: Int) -> Bool { boxes.index(forKey: id) != nil }
    var keys: Dictionary<Int, TaskEntryBox>.Keys { boxes.keys }
    var values: some Collection<TaskEntry> { boxes.values.lazy.map { $0.entry! } }

    @discardableResult
    mutating func removeValue(forKey id: Int) -> TaskEntry? { boxes.removeValue(forKey: id)?.entry }
}

/// One entry of `TaskTable`. Only reached through the table, which `TransferService` holds in
/// `ServiceState` under its lock, and changed only while the table is its one holder.
final class TaskEntryBox: @unchecked Sendable {
    /// Never nil while in the table (nil only for the moment a `_modify` removes the entry).
    fileprivate(set) var entry: TaskEntry?
    fileprivate init(_ entry: TaskEntry) { self.entry = entry }
}
