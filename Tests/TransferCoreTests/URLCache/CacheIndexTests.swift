import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The two LRU tiers of `CacheIndex`, without I/O.
@Suite struct CacheIndexTests {
    static let head = CacheFreshnessTests.response([:])

    @Test func memoryTierEvictsTheLeastRecentlyUsed() {
        var index = CacheIndex(memoryCapacity: 2_000, diskCapacity: 0)
        var work = CacheIndex.DiskWork()
        for name in ["a", "b", "c"] { #expect(index.insert(name, Self.head, body: Data(count: 100 * 6), file: nil, work: &work) == false) }
        // 5 % of 2,000 is 100 bytes: larger bodies are refused.
        for name in ["a", "b", "c"] { #expect(index.insert(name, Self.head, body: Data(count: 100), file: nil, work: &work)) }
        _ = index.use("a")
        for name in (0..<19).map(String.init) { _ = index.insert(name, Self.head, body: Data(count: 100), file: nil, work: &work) }
        #expect(index.memoryBytes <= 2_000)
        #expect(index.peek("a") != nil, "a was used after b and c")
        #expect(index.peek("b") == nil && index.peek("c") == nil)
        #expect(work.isEmpty)
    }

    @Test func diskTierDeletesFilesOfEvictedEntries() {
        var index = CacheIndex(memoryCapacity: 0, diskCapacity: 1_000)
        var work = CacheIndex.DiskWork()
        for n in 0..<11 { #expect(index.insert("k\(n)", Self.head, body: Data(count: 50), file: "f\(n)", work: &work)) }
        #expect(index.diskBytes == 550)
        for n in 11..<25 { _ = index.insert("k\(n)", Self.head, body: Data(count: 50), file: "f\(n)", work: &work) }
        #expect(index.diskBytes == 1_000)
        #expect(work.write.count == 25)
        #expect(work.delete == (0..<5).map { "f\($0)" })
        #expect(index.peek("k4") == nil && index.peek("k5") != nil)
        // Written files drop their in-memory copy (the memory tier holds nothing here).
        index.written("k5", file: "f5")
        #expect(index.peek("k5")?.body == nil)
    }

    @Test func replacingAnEntryDeletesItsOldFile() {
        var index = CacheIndex(memoryCapacity: 10_000, diskCapacity: 10_000)
        var work = CacheIndex.DiskWork()
        _ = index.insert("k", Self.head, body: Data(count: 10), file: "old", work: &work)
        _ = index.insert("k", Self.head, body: Data(count: 20), file: "new", work: &work)
        #expect(work.delete == ["old"])
        #expect(index.memoryBytes == 20 && index.diskBytes == 20)
        index.removeAll(work: &work)
        #expect(index.entries.isEmpty && index.memoryBytes == 0 && index.diskBytes == 0)
        #expect(work.delete == ["old", "new"])
    }
}
