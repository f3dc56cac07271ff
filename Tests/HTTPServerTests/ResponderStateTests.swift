import FoundationEssentials
@testable import HTTPServer
import Synchronization
import Testing

/// The responder state machine, driven by hand as the access handler and other threads would.
@Suite struct ResponderStateTests {
    private let ok = HTTPResponse(status: 200, body: Data("ok".utf8))
    private let late = HTTPResponse(status: 204)

    private func queuedStatus(_ action: ResponderState.Action) -> Int? {
        if case .queue(let response) = action { return response.status }
        return nil
    }

    @Test func answerDuringHandleIsQueuedOnReturn() {
        var state = ResponderState()
        #expect(state.respond(ok).isNone)
        #expect(state.respond(late).isIgnored)
        #expect(queuedStatus(state.handlerReturned()) == 200)
        #expect(state.phase.description == "responded")
        #expect(state.respond(late).isIgnored)
    }

    @Test func noAnswerSuspendsThenRespondResumesThenQueues() {
        var state = ResponderState()
        #expect(state.handlerReturned().isSuspend)
        #expect(state.phase.description == "suspending")
        #expect(state.suspendCompleted().isNone)
        #expect(state.phase.description == "suspended")
        #expect(state.respond(ok).isResume)
        #expect(state.phase.description == "resuming")
        #expect(state.respond(late).isIgnored)
        #expect(queuedStatus(state.resumedCallReached()) == 200)
        #expect(state.phase.description == "responded")
        #expect(state.resumedCallReached().isNone)
        #expect(state.respond(late).isIgnored)
    }

    @Test func answerWhileSuspendingIsResumedByTheConnectionThread() {
        var state = ResponderState()
        #expect(state.handlerReturned().isSuspend)
        // Another thread answers before MHD_suspend_connection returned: it must not resume.
        #expect(state.respond(ok).isNone)
        #expect(state.phase.description == "suspending(answered)")
        #expect(state.suspendCompleted().isResume)
        #expect(queuedStatus(state.resumedCallReached()) == 200)
    }

    @Test func spuriousCallWhileSuspendedDoesNothing() {
        var state = ResponderState()
        _ = state.handlerReturned()
        _ = state.suspendCompleted()
        #expect(state.resumedCallReached().isNone)
        #expect(state.phase.description == "suspended")
    }

    @Test func callbackResponderDeliversTheFirstAnswerOnly() {
        let delivered = Mutex<[Int]>([])
        let responder = Responder { response in delivered.withLock { $0.append(response.status) } }
        responder.respond(ok)
        responder.respond(late)
        #expect(delivered.withLock { $0 } == [200])
    }
}

extension ResponderState.Action {
    var isNone: Bool { if case .none = self { true } else { false } }
    var isIgnored: Bool { if case .ignored = self { true } else { false } }
    var isSuspend: Bool { if case .suspend = self { true } else { false } }
    var isResume: Bool { if case .resume = self { true } else { false } }
}
