internal import TransferModel

/// How many held tasks there are of each state, phase, kind, class and engine presence, kept by
/// `TaskTable` as its entries change, so `/metrics` and `/v1/stats` read a few counts instead of
/// walking every held task under the service's lock (with 200,000 queued tasks each scrape was
/// a walk of 200,000 entries: a request path linear in the tasks held, issue 18 part 3).
struct TaskCensus: Sendable {
    struct Key: Hashable, Sendable {
        var state: TaskState
        var phase: TaskPhase
        var kind: TaskKind
        var schedulingClass: SchedulingClass
        var inEngine: Bool

        /// The entry's key; nil for no entry. Read field by field (binding the entry would copy
        /// it, retaining each of its references).
        init?(_ entry: TaskEntry?) {
            guard let state = entry?.task.state, let phase = entry?.task.phase, let kind = entry?.task.kind,
                  let schedulingClass = entry?.task.schedulingClass, let inEngine = entry?.inEngine else { return nil }
            self.init(state: state, phase: phase, kind: kind, schedulingClass: schedulingClass, inEngine: inEngine)
        }

        init(state: TaskState, phase: TaskPhase, kind: TaskKind, schedulingClass: SchedulingClass, inEngine: Bool) {
            self.state = state
            self.phase = phase
            self.kind = kind
            self.schedulingClass = schedulingClass
            self.inEngine = inEngine
        }

        /// The five fields in one integer. The enums have String raw values, and a
        /// RawRepresentable enum hashes and compares its raw value: four String hashes per key,
        /// about 60 per 16 KiB download (callgrind). A payload-free enum is stored as its case's
        /// tag byte (`TaskEntryLayoutTests` holds them to one byte), so the tags tell the cases
        /// apart as well.
        var packed: UInt64 {
            Self.tag(state) | Self.tag(phase) << 8 | Self.tag(kind) << 16 | Self.tag(schedulingClass) << 24
                | (inEngine ? 1 << 32 : 0)
        }

        private static func tag<T>(_ value: T) -> UInt64 {
            withUnsafeBytes(of: value) { UInt64($0[0]) }
        }

        static func == (a: Key, b: Key) -> Bool { a.packed == b.packed }

        func hash(into hasher: inout Hasher) { hasher.combine(packed) }
    }

    private(set) var counts: [Key: Int] = [:]

    /// An entry went from `old` to `new` (nil: absent). Touches the counts only when its key changed.
    mutating func move(from old: Key?, to new: Key?) {
        guard old != new else { return }
        if let old {
            let left = (counts[old] ?? 0) - 1
            counts[old] = left > 0 ? left : nil
        }
        if let new { counts[new, default: 0] += 1 }
    }

    /// How many held tasks have a key that `matches`.
    func count(where matches: (Key) -> Bool) -> Int {
        counts.reduce(0) { $0 + (matches($1.key) ? $1.value : 0) }
    }
}
