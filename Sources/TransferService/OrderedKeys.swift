/// Distinct keys kept in ascending order, for reading the first few and counting the keys
/// before one (`GET /v1/queue` reads the queue through these, `Scheduler`).
///
/// Sorted chunks of at most `chunkCapacity` keys: an insert or a removal finds its chunk by
/// binary search over the chunks' last keys and moves at most a chunk's keys; a full chunk is
/// split in two. Reading the first `k` keys costs O(k); the rank of a key (how many come
/// before it) O(chunks + log chunkCapacity). A heap cannot be read in order without taking it
/// apart, and a sort of every queued task per request was tens of milliseconds at 100,000.
///
/// Keys must be distinct under `<` (two keys neither before the other are the same key).
struct OrderedKeys<Key: Comparable>: Sendable where Key: Sendable {
    static var chunkCapacity: Int { 512 }

    private var chunks: [[Key]] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func insert(_ key: Key) {
        count += 1
        guard !chunks.isEmpty else {
            chunks.append([key])
            return
        }
        let c = chunkIndex(for: key)
        let at = Self.lowerBound(of: key, in: chunks[c])
        // Keys mostly arrive in order (a queue's arrivals): past the end of a full last chunk,
        // a new chunk begins, so chunks fill up instead of being left half empty by splits.
        if c == chunks.count - 1, at == chunks[c].count, chunks[c].count >= Self.chunkCapacity {
            var chunk: [Key] = []
            chunk.reserveCapacity(Self.chunkCapacity)
            chunk.append(key)
            chunks.append(chunk)
            return
        }
        chunks[c].insert(key, at: at)
        if chunks[c].count > Self.chunkCapacity {
            // Both halves in arrays of their own size: the old one's capacity would be kept.
            let half = chunks[c].count / 2
            let lower = Array(chunks[c][..<half]), upper = Array(chunks[c][half...])
            chunks[c] = lower
            chunks.insert(upper, at: c + 1)
        }
    }

    /// Removes `key`; false when it was not here.
    @discardableResult
    mutating func remove(_ key: Key) -> Bool {
        guard !chunks.isEmpty else { return false }
        let c = chunkIndex(for: key)
        let at = Self.lowerBound(of: key, in: chunks[c])
        guard at < chunks[c].count, !(key < chunks[c][at]) else { return false }
        chunks[c].remove(at: at)
        if chunks[c].isEmpty { chunks.remove(at: c) }
        count -= 1
        return true
    }

    /// How many keys come before `key`.
    func rank(of key: Key) -> Int {
        guard !chunks.isEmpty else { return 0 }
        let c = chunkIndex(for: key)
        var before = 0
        for index in 0..<c { before += chunks[index].count }
        return before + Self.lowerBound(of: key, in: chunks[c])
    }

    /// The keys in ascending order (lazily: reading the first few costs only those).
    var ascending: LazySequence<FlattenSequence<[[Key]]>> { chunks.lazy.joined() }

    /// The chunk `key` belongs in: the first whose last key is not before it, else the last.
    private func chunkIndex(for key: Key) -> Int {
        var low = 0, high = chunks.count - 1
        while low < high {
            let mid = (low + high) / 2
            if chunks[mid][chunks[mid].count - 1] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private static func lowerBound(of key: Key, in chunk: [Key]) -> Int {
        var low = 0, high = chunk.count
        while low < high {
            let mid = (low + high) / 2
            if chunk[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
