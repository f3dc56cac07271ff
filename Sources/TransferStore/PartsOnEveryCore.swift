internal import Dispatch
internal import FoundationEssentials
internal import Synchronization

/// Work over a long list cut into parts that run at once, one per core (at most), the results
/// given back in the list's order. For the JSON of a big batch (its stored records here, its
/// 201 in TransferAPI), written while the request's client waits and the other cores idle.
package enum PartsOnEveryCore {
    /// Asked once: on Linux the answer reads the cgroup's files, a cost no single POST should pay.
    private static let cores = ProcessInfo.processInfo.activeProcessorCount

    /// `transform` of consecutive parts of `items` (each at least `minimumPart` long), in order;
    /// one part, on the caller's thread, when the list is too short to be worth a thread.
    package static func map<Item: Sendable, Part: Sendable>(
        _ items: [Item], minimumPart: Int, _ transform: @Sendable (ArraySlice<Item>) -> Part
    ) -> [Part] {
        let parts = min(cores, items.count / max(1, minimumPart))
        guard parts > 1 else { return [transform(items[...])] }
        let written = Mutex([Part?](repeating: nil, count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let range = (items.count * part / parts)..<(items.count * (part + 1) / parts)
            let result = transform(items[range])
            written.withLock { $0[part] = result }
        }
        return written.withLock { $0.map { $0! } }
    }
}
