import Foundation
import Testing
import TestSupport

/// `Data(count:byte:)` builds the tests' bodies; both ends of a transfer test use the same
/// bytes, so a wrong body would pass them unnoticed. Here it is held to the `map` form it replaced.
@Suite struct PatternBytesTests {
    @Test(arguments: [0, 1, 7, 4_097, 65_537])
    func theBytesAreThoseOfTheMapForm(count: Int) {
        let pattern: (Int) -> UInt8 = { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 10) }
        let built = Data(count: count, byte: pattern)
        #expect(built.count == count)
        #expect(byteDifference(built, Data((0..<count).map(pattern))) == nil)
    }

    @Test func eachOffsetIsAskedForOnceInOrder() {
        var asked: [Int] = []
        let built = Data(count: 5) { offset in
            asked.append(offset)
            return UInt8(offset * 2)
        }
        #expect(asked == [0, 1, 2, 3, 4])
        #expect(Array(built) == [0, 2, 4, 6, 8])
    }
}
