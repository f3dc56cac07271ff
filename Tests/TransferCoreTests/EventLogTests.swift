import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService
internal import JSONModel

/// `EventLog`: a session's newest events in memory, paged by sequence number.
@Suite struct EventLogTests {
    private func event(_ seq: Int, session: String = "s") -> TaskEvent {
        TaskEvent(seq: seq, sessionId: session, taskId: seq, type: .didReceiveData, time: Date(timeIntervalSince1970: Double(seq)), fields: ["n": .integer(Int64(seq))])
    }

    @Test func pageReturnsEventsAfterTheCursorUpToTheLimit() {
        var log = EventLog(capacity: 100)
        for seq in 1...10 { _ = log.append(event(seq)) }
        #expect(log.page(after: 0, limit: 3).map(\.seq) == [1, 2, 3])
        #expect(log.page(after: 3, limit: 100).map(\.seq) == Array(4...10))
        #expect(log.page(after: 7, limit: 2).map(\.seq) == [8, 9])
        #expect(log.page(after: 10, limit: 5).isEmpty)
        #expect(log.page(after: 99, limit: 5).isEmpty)
        #expect(log.page(after: 0, limit: 0).isEmpty)
        #expect(log.lastSeq == 10)
    }

    @Test func eventsAfterTheCursorAreEverythingPastIt() {
        var log = EventLog(capacity: 100)
        for seq in stride(from: 2, through: 20, by: 2) { _ = log.append(event(seq)) }
        #expect(log.events(after: 0).map(\.seq) == Array(stride(from: 2, through: 20, by: 2)))
        #expect(log.events(after: 7).map(\.seq) == [8, 10, 12, 14, 16, 18, 20])
        #expect(log.events(after: 8).map(\.seq) == [10, 12, 14, 16, 18, 20])
        #expect(log.events(after: 20).isEmpty)
    }

    @Test func pageFindsTheCursorBetweenSparseSequenceNumbers() {
        // seq is global over sessions, so one session's log has gaps.
        var log = EventLog(capacity: 100)
        for seq in stride(from: 2, through: 40, by: 2) { _ = log.append(event(seq)) }
        #expect(log.page(after: 3, limit: 3).map(\.seq) == [4, 6, 8])
        #expect(log.page(after: 4, limit: 2).map(\.seq) == [6, 8])
        #expect(log.page(after: 1, limit: 1).map(\.seq) == [2])
        #expect(log.page(after: 39, limit: 9).map(\.seq) == [40])
    }

    @Test func emptyLog() {
        let log = EventLog(capacity: 5)
        #expect(log.page(after: 0, limit: 10).isEmpty)
        #expect(log.lastSeq == nil)
    }

    @Test func trimmingKeepsExactlyTheNewestCapacityEvents() {
        let capacity = 8
        var log = EventLog(capacity: capacity)
        var trims: [Int] = []
        for seq in 1...100 {
            if let oldestKept = log.append(event(seq)) {
                trims.append(seq)
                // Right after a trim the log holds exactly the newest `capacity` events, and
                // says which is the oldest (the store prunes below it).
                #expect(log.events.map(\.seq) == Array((seq - capacity + 1)...seq))
                #expect(oldestKept == seq - capacity + 1)
            }
            // Never more than capacity plus the batching slack, never fewer than asked to keep.
            #expect(log.events.count <= capacity + capacity / 4)
            #expect(log.events.count >= min(seq, capacity))
            #expect(log.events.last?.seq == seq)
        }
        #expect(trims.first == capacity + capacity / 4 + 1)
        #expect(trims.count > 10)
        // The newest `capacity` are always there to page through.
        #expect(log.page(after: 100 - capacity, limit: 1000).map(\.seq) == Array((100 - capacity + 1)...100))
    }

    @Test func capacityBelowOneKeepsOne() {
        var log = EventLog(capacity: 0)
        #expect(log.capacity == 1)
        for seq in 1...5 { _ = log.append(event(seq)) }
        #expect(log.events.last?.seq == 5)
        #expect(log.events.count <= 1)
    }
}
