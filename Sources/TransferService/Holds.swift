internal import FoundationEssentials
internal import HeapModule
internal import TransferModel

/// Running tasks kept out of the scheduler until a date (a retry's backoff, a wait for
/// connectivity, an earliestBeginDate), each in the phase it shows meanwhile. A value in
/// `ServiceState` with no I/O; `TransferService+Holds` arms one timer for `nextDue`.
///
/// A min-heap of due dates makes a hold and a due release O(log n). Releasing a hold early
/// (suspend, cancel) only forgets it in `holds`; its heap entry is skipped when it surfaces, and
/// the heap is rebuilt when such stale entries outnumber the live ones.
struct Holds: Sendable {
    struct Hold: Sendable, Equatable {
        let until: Date
        let phase: TaskPhase
        /// Tells this hold's heap entry from those of earlier holds of the same task.
        fileprivate let serial: Int
    }

    private struct Due: Comparable, Sendable {
        let until: Date
        let serial: Int
        let taskId: Int
        static func < (a: Due, b: Due) -> Bool { (a.until, a.serial) < (b.until, b.serial) }
    }

    private var holds: [Int: Hold] = [:]
    private var heap = Heap<Due>()
    private var serial = 0

    var count: Int { holds.count }
    var isEmpty: Bool { holds.isEmpty }

    func hold(of taskId: Int) -> Hold? { holds[taskId] }

    /// Holds `taskId` until `until`, replacing any hold it had.
    mutating func insert(task taskId: Int, until: Date, phase: TaskPhase) {
        serial += 1
        holds[taskId] = Hold(until: until, phase: phase, serial: serial)
        heap.insert(Due(until: until, serial: serial, taskId: taskId))
    }

    /// Forgets the task's hold; returns it if it had one.
    @discardableResult
    mutating func remove(task taskId: Int) -> Hold? {
        guard let hold = holds.removeValue(forKey: taskId) else { return nil }
        if heap.count > 2 * holds.count + 32 {
            heap = Heap(holds.map { Due(until: $0.value.until, serial: $0.value.serial, taskId: $0.key) })
        }
        return hold
    }

    /// When the earliest hold is due; nil when none is held.
    mutating func nextDue() -> Date? {
        dropStale()
        return heap.min?.until
    }

    /// Takes out every hold due at `now`, earliest first, and returns their tasks.
    mutating func takeDue(now: Date) -> [Int] {
        var due: [Int] = []
        while true {
            dropStale()
            guard let top = heap.min, top.until <= now else { return due }
            heap.removeMin()
            holds[top.taskId] = nil
            due.append(top.taskId)
        }
    }

    /// Pops heap entries whose hold was released or replaced.
    private mutating func dropStale() {
        while let top = heap.min, holds[top.taskId]?.serial != top.serial { heap.removeMin() }
    }
}
