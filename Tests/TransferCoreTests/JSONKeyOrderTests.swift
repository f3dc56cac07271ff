import Testing
@testable import TransferModel

/// `JSONKeyOrder` orders keys as `TaskJSONWriter.precedes` does (JSONEncoder's `.sortedKeys`):
/// over every pair of a set of keys made to meet its edges (a shared start of 8 to 24 bytes, 16
/// among them, a key that starts another, zero bytes, bytes past ASCII, the empty key).
@Suite struct JSONKeyOrderTests {
    static let keys: [String] = {
        let stems = ["", "a", "A", "Content-Type", "content-type", "X-Forwarded-For", "é", "\u{1F600}", "a\u{0}", "\u{0}", "\u{7F}", "\u{80}"]
        var keys = Set(stems)
        // Around the 16 bytes the words hold: a shared start of 8 to 24 bytes, then every tail.
        for length in [8, 15, 16, 17, 24] {
            let start = String(repeating: "k", count: length)
            for tail in ["", "a", "b", "\u{0}", "é", "aa", "ab", "\u{FF}"] { keys.insert(start + tail) }
        }
        for stem in stems { for tail in ["", "-", "0", "\u{0}", "z"] { keys.insert(stem + tail) } }
        return keys.sorted()
    }()

    @Test func everyPairIsOrderedAsTheBytesAre() {
        let orders = Self.keys.map(JSONKeyOrder.init)
        #expect(Self.keys.count > 90)
        for (i, a) in Self.keys.enumerated() {
            for (j, b) in Self.keys.enumerated() {
                #expect(JSONKeyOrder.precedes(orders[i], a, orders[j], b) == TaskJSONWriter.precedes(a, b), "\(a.debugDescription) \(b.debugDescription)")
            }
        }
    }

    @Test func anObjectsEntriesComeInTheBytesOrder() {
        let object = Dictionary(uniqueKeysWithValues: Self.keys.enumerated().map { ($1, $0) })
        let entries = JSONKeyOrder.sorted(object)
        #expect(entries.map(\.key) == Self.keys.sorted { TaskJSONWriter.precedes($0, $1) })
        #expect(entries.allSatisfy { object[$0.key] == $0.value })
    }
}
