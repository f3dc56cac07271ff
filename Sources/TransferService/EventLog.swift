internal import TransferModel

/// The newest events of one session, in memory, for the feed and its long-polls. Older events
/// stay in the store until pruned to the same retention, or acknowledged.
struct EventLog: Sendable {
    private(set) var events: [TaskEvent] = []
    let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Appends; when old events were dropped, returns the seq of the oldest one kept (the store
    /// prunes what is older).
    mutating func append(_ event: TaskEvent) -> Int? {
        events.append(event)
        // Trim in batches of a quarter so appends stay amortised O(1).
        guard events.count > capacity + capacity / 4 else { return nil }
        events.removeFirst(events.count - capacity)
        return events.first?.seq
    }

    /// Up to `limit` events with seq > `after`.
    func page(after: Int, limit: Int) -> [TaskEvent] {
        let low = firstIndex(after: after)
        return Array(events[low..<min(events.count, low + min(limit, events.count - low))])
    }

    /// The events with seq > `after`, in order, without copying them.
    func events(after: Int) -> ArraySlice<TaskEvent> { events[firstIndex(after: after)...] }

    /// How many events have seq > `after`.
    func count(after: Int) -> Int { events.count - firstIndex(after: after) }

    /// Forgets the events with seq <= `seq` (the client acknowledged them).
    mutating func drop(through seq: Int) {
        events.removeFirst(firstIndex(after: seq))
    }

    /// The index of the first event with seq > `after` (binary search: seq increases).
    private func firstIndex(after: Int) -> Int {
        var low = 0, high = events.count
        while low < high {
            let mid = (low + high) / 2
            if events[mid].seq <= after { low = mid + 1 } else { high = mid }
        }
        return low
    }

    var lastSeq: Int? { events.last?.seq }
}
