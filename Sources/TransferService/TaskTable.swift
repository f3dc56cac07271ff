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
///
/// `@unchecked Sendable`: the boxes (a `ManagedBuffer`, never `Sendable`) are reached only
/// through the table, under the service's lock, and shared between copies of it only to read.
struct TaskTable: @unchecked Sendable {
    private var boxes: [Int: TaskEntryBox] = [:]
    /// The held tasks counted by state, phase, kind, class and engine presence, kept as entries
    /// change here (every change of an entry goes through this table).
    private(set) var census = TaskCensus()

    init() {}

    subscript(id: Int) -> TaskEntry? {
        // Addressed, not copied: `tasks[id]?.task.state` reads one field of the entry in its box.
        // (A `_read` coroutine copied the whole entry into a frame it allocated, every read.)
        unsafeAddress {
            guard let box = boxes[id] else { return UnsafePointer(Self.missing) }
            return UnsafePointer(box.slot)  // the box outlives the access: the table holds it
        }
        set {
            let index = boxes.index(forKey: id)
            census.move(from: index.flatMap { TaskCensus.Key(boxes.values[$0].slot.pointee) }, to: TaskCensus.Key(newValue))
            guard let newValue else {
                if let index { boxes.remove(at: index) }
                return
            }
            if let index, isKnownUniquelyReferenced(&boxes.values[index]) {
                boxes.values[index].slot.pointee = newValue
            } else {
                boxes[id] = TaskEntryBox.make(newValue)
            }
        }
        // In place, so a change to an entry's array (its transactions) does not copy the array;
        // one hash lookup (the index), however many steps use the slot.
        _modify {
            guard let index = boxes.index(forKey: id) else {
                var added: TaskEntry?
                yield &added
                if let added {
                    census.move(from: nil, to: TaskCensus.Key(added))
                    boxes[id] = TaskEntryBox.make(added)
                }
                return
            }
            if !isKnownUniquelyReferenced(&boxes.values[index]) { boxes.values[index] = TaskEntryBox.make(boxes.values[index].slot.pointee!) }
            let box = boxes.values[index]  // the table holds it through the yield
            let before = TaskCensus.Key(box.slot.pointee)
            yield &box.slot.pointee
            census.move(from: before, to: TaskCensus.Key(box.slot.pointee))
            if box.slot.pointee == nil { boxes.remove(at: index) }
        }
    }

    /// What a read of an id without an entry points at: nil, for good.
    /// `nonisolated(unsafe)`: written once, when made; only read after.
    nonisolated(unsafe) private static let missing: UnsafeMutablePointer<TaskEntry?> = {
        let pointer = UnsafeMutablePointer<TaskEntry?>.allocate(capacity: 1)
        pointer.initialize(to: nil)
        return pointer
    }()

    var count: Int { boxes.count }
    func contains(_ id: Int) -> Bool { boxes.index(forKey: id) != nil }
    var keys: Dictionary<Int, TaskEntryBox>.Keys { boxes.keys }

    @discardableResult
    mutating func removeValue(forKey id: Int) -> TaskEntry? {
        guard let box = boxes.removeValue(forKey: id) else { return nil }
        return withExtendedLifetime(box) {  // read before the box goes
            census.move(from: TaskCensus.Key(box.slot.pointee), to: nil)
            return box.slot.pointee
        }
    }
}

/// One entry of `TaskTable`. Only reached through the table, which `TransferService` holds in
/// `ServiceState` under its lock, and changed only while the table is its one holder.
///
/// The entry is the buffer's one element, reached through a pointer: a class's stored property
/// is read by copying it whole (about 600 bytes, retaining each reference in it), and the
/// table's reads (`tasks[id]?.task.state`) were a tenth of the updates thread's time with small
/// files. Through the pointer they read in place. Same allocation as a stored property.
final class TaskEntryBox: ManagedBuffer<Void, TaskEntry?> {
    /// Where the entry is; never nil while in the table (nil only for the moment a `_modify`
    /// removes it). Valid only while the box is held: a box taken out of the table is kept
    /// alive (`withExtendedLifetime`) until its entry is read.
    var slot: UnsafeMutablePointer<TaskEntry?> { withUnsafeMutablePointerToElements { $0 } }

    fileprivate static func make(_ entry: TaskEntry) -> TaskEntryBox {
        let box = unsafeDowncast(create(minimumCapacity: 1) { _ in () }, to: TaskEntryBox.self)
        box.slot.initialize(to: entry)
        return box
    }

    deinit { _ = slot.deinitialize(count: 1) }
}
