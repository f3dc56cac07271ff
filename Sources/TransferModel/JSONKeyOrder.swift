/// A key's place in JSONEncoder's `.sortedKeys` order (its UTF-8 bytes compared as memcmp compares
/// them, a key that starts another coming first), read once per key: its first 16 bytes as two
/// big-endian integers, and its length. Keys that differ in their first 16 bytes are ordered by
/// two integer comparisons; only two keys longer than 16 bytes that share those bytes are
/// compared byte by byte (`TaskJSONWriter.precedes`).
///
/// Why: sorting an object's keys (a response's headers, the response among an event's fields)
/// reached both keys' bytes through `withUTF8` for every comparison: about 25k instructions a
/// 16 KiB download on the store writer (callgrind, issue 18).
struct JSONKeyOrder {
    private let high: UInt64
    private let low: UInt64
    private let count: Int

    init(_ key: String) {
        // A native or small String lends its bytes in place; any other is copied first.
        let words = key.utf8.withContiguousStorageIfAvailable { Self.words(UnsafeRawBufferPointer($0)) }
            ?? Array(key.utf8).withUnsafeBytes { Self.words($0) }
        high = words.high
        low = words.low
        count = key.utf8.count
    }

    /// The first 16 bytes as two big-endian words, zeros past the end.
    private static func words(_ bytes: UnsafeRawBufferPointer) -> (high: UInt64, low: UInt64) {
        (word(bytes, from: 0), word(bytes, from: 8))
    }

    private static func word(_ bytes: UnsafeRawBufferPointer, from start: Int) -> UInt64 {
        let end = min(bytes.count, start + 8)
        guard start < end else { return 0 }
        if end - start == 8 { return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)) }
        var word: UInt64 = 0
        for index in start..<end { word |= UInt64(bytes[index]) << (56 - 8 * (index - start)) }
        return word
    }

    /// Whether key `a` (whose order is `x`) comes before key `b` (whose order is `y`).
    static func precedes(_ x: JSONKeyOrder, _ a: String, _ y: JSONKeyOrder, _ b: String) -> Bool {
        if x.high != y.high { return x.high < y.high }
        if x.low != y.low { return x.low < y.low }
        // The same first 16 bytes (zeros past a short key's end): a key of at most 16 bytes is
        // the other's start, so the shorter comes first; two longer ones differ further on.
        if x.count <= 16 || y.count <= 16 { return x.count < y.count }
        return TaskJSONWriter.precedes(a, b)
    }

    /// The entries of `object` in this order.
    static func sorted<Value>(_ object: [String: Value]) -> [(order: JSONKeyOrder, key: String, value: Value)] {
        var entries: [(order: JSONKeyOrder, key: String, value: Value)] = []
        entries.reserveCapacity(object.count)
        for (key, value) in object { entries.append((JSONKeyOrder(key), key, value)) }
        entries.sort { precedes($0.order, $0.key, $1.order, $1.key) }
        return entries
    }
}
