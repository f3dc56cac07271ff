import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// A stream task's buffers: bytes come out in the order they went in, across chunk borders,
/// and the front chunk a send retries keeps its bytes until they are dropped.
@Suite struct ByteQueueTests {
    @Test func takesAcrossChunksInOrder() {
        var queue = ByteQueue()
        queue.append([1, 2, 3])
        queue.append([])
        queue.append([4, 5])
        queue.append([6])
        #expect(queue.count == 6)
        #expect(queue.take(upTo: 2) == [1, 2])
        #expect(queue.take(upTo: 3) == [3, 4, 5])
        #expect(queue.count == 1)
        #expect(queue.take(upTo: 10) == [6])
        #expect(queue.isEmpty && queue.take(upTo: 1) == [])
    }

    @Test func dropsPartialSendsFromTheFrontChunk() {
        var queue = ByteQueue()
        queue.append([1, 2, 3, 4])
        queue.append([5])
        #expect(queue.front.map(Array.init) == [1, 2, 3, 4])
        queue.drop(3)
        #expect(queue.front.map(Array.init) == [4])
        queue.drop(1)
        #expect(queue.front.map(Array.init) == [5])
        queue.drop(1)
        #expect(queue.front == nil && queue.count == 0)
    }

    @Test func manyChunksStayInOrder() {
        var queue = ByteQueue()
        var expected: [UInt8] = []
        for index in 0..<500 {
            let chunk = [UInt8](repeating: UInt8(index % 251), count: index % 7 + 1)
            queue.append(chunk)
            expected += chunk
            if index % 3 == 0 { #expect(queue.take(upTo: 5) == Array(expected.prefix(5))); expected.removeFirst(min(5, expected.count)) }
        }
        #expect(queue.take(upTo: .max) == expected)
    }
}
