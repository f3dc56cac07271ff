import Foundation
import Synchronization
import Testing
@testable import TransferEngine

/// A running data task's body as readers follow it: each at its own position, woken when bytes
/// or the end come, a closed range ending where it asked.
@Suite struct LiveBodyTests {
    final class Wakes: Sendable {
        let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
    }

    private func append(_ body: LiveBody, _ text: String) {
        Data(text.utf8).withUnsafeBytes { body.append($0) }
    }

    private func read(_ body: LiveBody, _ reader: Int, at offset: Int, end: Int? = nil, woken: Wakes? = nil) -> (LiveBody.Read, String) {
        var buffer = [UInt8](repeating: 0, count: 4)
        let result = buffer.withUnsafeMutableBytes { raw in
            body.read(reader, at: offset, end: end, into: raw) { woken?.count.add(1, ordering: .relaxed) }
        }
        if case .bytes(let count) = result { return (result, String(decoding: buffer[..<count], as: UTF8.self)) }
        return (result, "")
    }

    @Test func readersFollowAtTheirOwnPaceAndAreWokenOnce() {
        let body = LiveBody()
        let first = body.join(), second = body.join()
        let woken = Wakes()
        #expect(read(body, first, at: 0, woken: woken).0 == .wait)
        #expect(read(body, second, at: 0, woken: woken).0 == .wait)
        append(body, "hello world")
        #expect(woken.value == 2)
        #expect(read(body, first, at: 0).1 == "hell")
        #expect(read(body, second, at: 8).1 == "rl")  // the last byte waits for a complete end
        #expect(read(body, second, at: 10, woken: woken).0 == .wait)
        body.leave(second)  // gone: its wake is dropped
        body.finish(with: Data("hello world".utf8)).run()
        #expect(woken.value == 2)
        #expect(read(body, first, at: 10).1 == "d")
        #expect(read(body, first, at: 11).0 == .end)
        #expect(body.ending == .complete)
    }

    @Test func aClosedRangeEndsAtItsLastByteAndAFailureIsTold() {
        let body = LiveBody()
        let reader = body.join()
        append(body, "abcdef")
        #expect(read(body, reader, at: 2, end: 4).1 == "cd")
        #expect(read(body, reader, at: 4, end: 4).0 == .end)
        body.finish(.failed("cancelled")).run()
        #expect(read(body, reader, at: 6).0 == .failed("cancelled"))
        #expect(read(body, reader, at: 0).1 == "abcd")  // what arrived is still readable
    }

    @Test func aBodyTheCacheAnsweredBecomesTheLiveOne() {
        let body = LiveBody()
        body.finish(with: Data("cached".utf8)).run()
        #expect(body.contents == Data("cached".utf8) && body.ending == .complete)
        let other = LiveBody()
        Data("abc".utf8).withUnsafeBytes { other.append($0) }
        other.finish(with: Data("xyz!".utf8)).run()
        #expect(other.ending != .complete)
    }
}
