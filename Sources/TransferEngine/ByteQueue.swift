/// Bytes in arrival order, as a queue of chunks: a stream task's receive buffer (filled from the
/// socket, taken by reads) and its send buffer (filled by writes, drained to the socket). A
/// chunk is never changed while queued, so the front chunk stays at one address until it is
/// sent (OpenSSL's rule for retrying a write). Owned by one `StreamConnection`.
struct ByteQueue {
    private var chunks: [[UInt8]] = []
    /// Where the first chunk's unconsumed bytes start.
    private var head = 0
    /// Index of the first chunk still in use (chunks before it are compacted away lazily).
    private var first = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        count += bytes.count
    }

    /// The unconsumed bytes of the first chunk (what a send tries next).
    var front: ArraySlice<UInt8>? {
        first < chunks.count ? chunks[first][head...] : nil
    }

    /// Consumes `n` bytes from the front (at most the front chunk's).
    mutating func drop(_ n: Int) {
        guard first < chunks.count, n > 0 else { return }
        let available = chunks[first].count - head
        let consumed = min(n, available)
        head += consumed
        count -= consumed
        if head == chunks[first].count { popFront() }
    }

    /// Removes and returns up to `limit` bytes from the front, across chunks.
    mutating func take(upTo limit: Int) -> [UInt8] {
        var taken: [UInt8] = []
        taken.reserveCapacity(min(limit, count))
        while taken.count < limit, first < chunks.count {
            let chunk = chunks[first]
            let end = head + min(limit - taken.count, chunk.count - head)  // no overflow for limit = .max
            taken.append(contentsOf: chunk[head..<end])
            count -= end - head
            head = end
            if head == chunk.count { popFront() }
        }
        return taken
    }

    mutating func removeAll() {
        chunks.removeAll()
        head = 0
        first = 0
        count = 0
    }

    private mutating func popFront() {
        chunks[first] = []
        first += 1
        head = 0
        if first == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            first = 0
        } else if first >= 64 {
            chunks.removeFirst(first)
            first = 0
        }
    }
}
