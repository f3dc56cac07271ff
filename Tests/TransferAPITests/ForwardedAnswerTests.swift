import Foundation
import Synchronization
import Testing
import HTTPServer
import TransferService
@testable import TransferAPI

/// A passed-on answer goes to the client as it arrives, holding at most `capacity` bytes: the
/// exchange's thread waits for a slow client, and is let go when the client leaves.
@Suite struct ForwardedAnswerTests {
    /// Boxes shared with the producer threads (a local Mutex or Atomic must not be captured).
    private final class Answered: Sendable {
        let response = Mutex<HTTPResponse?>(nil)
    }

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    private static func answer(_ answered: Answered) -> ForwardedAnswer {
        ForwardedAnswer(respond: { response in answered.response.withLock { $0 = response } },
                        failure: { _ in HTTPResponse(status: 503) })
    }

    /// Reads whatever is there now.
    private static func drain(_ answer: ForwardedAnswer) -> (bytes: [UInt8], last: HTTPBodyStreamRead) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let read = buffer.withUnsafeMutableBytes { answer.read(into: $0, wake: {}) }
            guard case .bytes(let count) = read else { return (out, read) }
            out += buffer[..<count]
        }
    }

    @Test func aSlowClientHoldsTheExchangeAtTheCapacityAndGetsEveryByte() throws {
        let answered = Answered()
        let answer = Self.answer(answered)
        let sent = (0..<(3 * ForwardedAnswer.capacity + 12_345)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        answer.head(status: 200, headers: [("Content-Type", "application/octet-stream")], length: sent.count)
        let response = try #require(answered.response.withLock { $0 })
        #expect(response.status == 200)
        let pushed = Counter()
        let producer = Thread {
            for chunk in stride(from: 0, to: sent.count, by: 16 * 1024) {
                let end = min(chunk + 16 * 1024, sent.count)
                _ = sent[chunk..<end].withUnsafeBytes { answer.body($0) }
                pushed.value.store(end, ordering: .relaxed)
            }
            answer.end(complete: true)
        }
        producer.start()
        var received: [UInt8] = []
        var last = HTTPBodyStreamRead.wait
        while received.count < sent.count || named(last) != "end" {
            Thread.sleep(forTimeInterval: 0.01)
            // Never more than the capacity and one chunk ahead of the client.
            #expect(pushed.value.load(ordering: .relaxed) - received.count <= ForwardedAnswer.capacity + 16 * 1024)
            let (bytes, read) = Self.drain(answer)
            received += bytes
            last = read
            if case .failed = read { break }
        }
        #expect(received == sent)
        answer.close()
    }

    @Test func aClientThatLeavesLetsTheWaitingExchangeGo() throws {
        let answer = Self.answer(Answered())
        answer.head(status: 200, headers: [], length: nil)
        let chunk = [UInt8](repeating: 7, count: ForwardedAnswer.capacity)
        #expect(chunk.withUnsafeBytes { answer.body($0) })
        let outcome = Answered()  // its status: 1 refused, 2 accepted
        let producer = Thread {
            let taken = chunk.withUnsafeBytes { answer.body($0) }
            outcome.response.withLock { $0 = HTTPResponse(status: taken ? 2 : 1) }
        }
        producer.start()
        Thread.sleep(forTimeInterval: 0.2)
        #expect(outcome.response.withLock { $0 } == nil, "the second chunk went past the capacity")
        answer.close()
        let deadline = Date().addingTimeInterval(5)
        while outcome.response.withLock({ $0 }) == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(outcome.response.withLock { $0?.status } == 1)
    }

    @Test func anExchangeCutShortIsAFailedBodyAndAFailureBeforeTheHeadIsAnError() throws {
        let answered = Answered()
        let answer = Self.answer(answered)
        answer.head(status: 200, headers: [], length: 10)
        _ = [UInt8](repeating: 1, count: 4).withUnsafeBytes { answer.body($0) }
        answer.end(complete: false)
        let (bytes, last) = Self.drain(answer)
        #expect(bytes.count == 4)
        #expect(named(last) == "failed")

        let failed = Answered()
        Self.answer(failed).failed(.unreachable("connection refused"))
        #expect(failed.response.withLock { $0?.status } == 503)
    }
}

private func named(_ read: HTTPBodyStreamRead) -> String {
    switch read {
    case .bytes(let count): "bytes(\(count))"
    case .wait: "wait"
    case .end: "end"
    case .failed: "failed"
    }
}
