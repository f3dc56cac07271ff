import FoundationEssentials
@testable import HTTPServer
import Synchronization
import Testing

/// The streamed body's state machine, driven by hand as the content reader, the stream's
/// wake and stop() would, with the wake at each point where it can race the suspension.
@Suite struct StreamedBodyStateTests {
    @Test func dataIsReadWithoutSuspending() {
        var state = StreamedBodyState()
        #expect(state.readStarting() == .read)
        #expect(state.phase.description == "reading")
        state.readGaveData()
        #expect(state.phase.description == "idle")
        #expect(state.readStarting() == .read)
    }

    /// (c) The wake comes once the connection is suspended: it resumes it, once.
    @Test func waitSuspendsAndTheWakeResumesOnce() {
        var state = StreamedBodyState()
        _ = state.readStarting()
        #expect(state.readGaveWait() == .suspend)
        #expect(state.phase.description == "suspending")
        #expect(state.suspendCompleted() == .none)
        #expect(state.phase.description == "suspended")
        #expect(state.wake() == .resume)
        #expect(state.phase.description == "resuming")
        // A second wake (or stop) before libmicrohttpd reads again must not resume twice.
        #expect(state.wake() == .none)
        #expect(state.cancel() == .none)
        #expect(state.readStarting() == .fail)
    }

    /// (a) The wake comes before read returned `.wait`: no suspension, libmicrohttpd asks again.
    @Test func wakeDuringTheReadRetriesWithoutSuspending() {
        var state = StreamedBodyState()
        _ = state.readStarting()
        #expect(state.wake() == .none)
        #expect(state.phase.description == "reading(woken)")
        #expect(state.readGaveWait() == .retry)
        #expect(state.phase.description == "idle")
        #expect(state.readStarting() == .read)
    }

    /// (b) The wake comes while MHD_suspend_connection runs: the connection thread resumes it
    /// once the suspension is done, never the waking thread.
    @Test func wakeDuringTheSuspensionIsResumedByTheConnectionThread() {
        var state = StreamedBodyState()
        _ = state.readStarting()
        #expect(state.readGaveWait() == .suspend)
        #expect(state.wake() == .none)
        #expect(state.wake() == .none)
        #expect(state.phase.description == "suspending(woken)")
        #expect(state.suspendCompleted() == .resume)
        #expect(state.phase.description == "resuming")
        #expect(state.wake() == .none)
        #expect(state.readStarting() == .read)
    }

    /// (d) A wake after the response was destroyed does nothing.
    @Test func wakeAfterCloseDoesNothing() {
        var state = StreamedBodyState()
        _ = state.readStarting()
        state.readGaveData()
        state.close()
        #expect(state.wake() == .none)
        #expect(state.cancel() == .none)
        #expect(state.phase.description == "closed")
    }

    @Test func wakeWhileIdleIsForgotten() {
        var state = StreamedBodyState()
        #expect(state.wake() == .none)
        #expect(state.phase.description == "idle")
        _ = state.readStarting()
        #expect(state.readGaveWait() == .suspend)
    }

    @Test func cancelResumesASuspendedBodyAndFailsItsNextRead() {
        var state = StreamedBodyState()
        _ = state.readStarting()
        _ = state.readGaveWait()
        _ = state.suspendCompleted()
        #expect(state.cancel() == .resume)
        #expect(state.wake() == .none)
        #expect(state.readStarting() == .fail)
        #expect(state.readStarting() == .fail)
    }

    @Test func cancelDuringTheReadFailsInsteadOfSuspending() {
        var state = StreamedBodyState()
        _ = state.readStarting()
        #expect(state.cancel() == .none)
        #expect(state.readGaveWait() == .fail)
        #expect(state.readStarting() == .fail)
    }

    @Test func cancelDuringTheSuspensionIsResumedByTheConnectionThread() {
        var state = StreamedBodyState()
        _ = state.readStarting()
        _ = state.readGaveWait()
        #expect(state.cancel() == .none)
        #expect(state.suspendCompleted() == .resume)
        #expect(state.readStarting() == .fail)
    }

    @Test func cancelBeforeTheFirstReadFailsIt() {
        var state = StreamedBodyState()
        #expect(state.cancel() == .none)
        #expect(state.readStarting() == .fail)
    }

    /// Every place a wake and a cancel can fall in one wait: each suspension gets exactly
    /// one resume, and the body is never left suspended.
    @Test func everySuspensionGetsExactlyOneResume() {
        // Points: 0 during the read, 1 while suspending, 2 once suspended, 3 never.
        for wakeAt in 0...3 {
            for cancelAt in 0...3 {
                var state = StreamedBodyState()
                var suspends = 0
                var resumes = 0
                func count(_ action: StreamedBodyState.Action) {
                    if action == .suspend { suspends += 1 }
                    if action == .resume { resumes += 1 }
                }
                func events(at point: Int) {
                    if wakeAt == point { count(state.wake()) }
                    if cancelAt == point { count(state.cancel()) }
                }
                #expect(state.readStarting() == .read)
                events(at: 0)
                let afterWait = state.readGaveWait()
                count(afterWait)
                events(at: 1)
                if afterWait == .suspend { count(state.suspendCompleted()) }
                events(at: 2)
                let context = "wake at \(wakeAt), cancel at \(cancelAt)"
                let stuck = state.phase == .suspended
                #expect(resumes == suspends - (stuck ? 1 : 0), "\(context)")
                #expect(!stuck || (wakeAt == 3 && cancelAt == 3), "\(context): left suspended")
                if cancelAt < 3 && !stuck {
                    #expect(state.readStarting() == .fail, "\(context)")
                }
            }
        }
    }

    /// A stream in a second answer is closed at once: it will never be queued.
    @Test func ignoredAnswerClosesItsStream() {
        let delivered = Mutex<[Int]>([])
        let responder = Responder { response in delivered.withLock { $0.append(response.status) } }
        let stream = CountingStream()
        responder.respond(HTTPResponse(status: 200))
        #expect(stream.closes == 0)
        responder.respond(HTTPResponse(status: 200, body: .stream(stream, length: nil)))
        #expect(stream.closes == 1)
        #expect(delivered.withLock { $0 } == [200])
    }
}

/// A stream that only counts its calls.
final class CountingStream: HTTPBodyStream {
    private let counts = Mutex((reads: 0, closes: 0))

    func read(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) -> HTTPBodyStreamRead {
        counts.withLock { $0.reads += 1 }
        return .end
    }

    func close() { counts.withLock { $0.closes += 1 } }
    var reads: Int { counts.withLock { $0.reads } }
    var closes: Int { counts.withLock { $0.closes } }
}
