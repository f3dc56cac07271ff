import Testing
@testable import TransferService

/// A session's ascending task ids: the cursor's place and a removal by binary search give what
/// a scan gives.
@Suite struct AscendingTaskIdsTests {
    static let lists: [[Int]] = [[], [5], [1, 2, 3], [2, 4, 6, 8, 10], Array(stride(from: 3, to: 400, by: 7))]

    @Test(arguments: lists)
    func theCursorsPlaceIsTheFirstIdAboveIt(ids: [Int]) {
        for cursor in -1...((ids.last ?? 0) + 2) {
            #expect(ids.ascendingIndex(after: cursor) == (ids.firstIndex { $0 > cursor } ?? ids.count), "cursor \(cursor)")
        }
    }

    @Test(arguments: lists)
    func removingAnIdLeavesTheOthersInOrder(ids: [Int]) {
        for id in -1...((ids.last ?? 0) + 2) {
            var removed = ids
            removed.removeAscending(id)
            #expect(removed == ids.filter { $0 != id }, "id \(id)")
        }
    }
}
