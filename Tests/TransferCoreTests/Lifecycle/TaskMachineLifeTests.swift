import Testing
@testable import TransferModel

/// Whole lives, event after event, as the service feeds them: what the client sees of the task
/// (state and phase) and what the service is told to do at each step.
@Suite struct TaskMachineLifeTests {
    typealias Facts = TaskMachine.Facts

    /// Feeds `event` and returns the new state, phase and actions.
    private func step(_ machine: inout TaskMachine, _ event: TaskMachine.Event, _ facts: Facts = Facts()) throws -> (TaskState, TaskPhase, [TaskMachine.Action]) {
        let actions = try machine.handle(event, facts)
        return (machine.state, machine.phase, actions)
    }

    @Test func aDownloadIsQueuedStartedAnsweredAndCompleted() throws {
        var machine = TaskMachine(created: .running)
        #expect(try step(&machine, .schedule) == (.running, .queued, [.enqueue]))
        #expect(try step(&machine, .admit) == (.running, .connecting, [.recordStart, .startTransfer]))
        #expect(try step(&machine, .responseReceived, Facts(inEngine: true)) == (.running, .transferring, [.publish]))
        let (state, phase, actions) = try step(&machine, .finish, Facts(inEngine: true))
        #expect((state, phase) == (.completed, .done))
        #expect(actions.first(where: { if case .emit = $0 { true } else { false } }) == .emit(.didCompleteWithError))
        #expect(throws: TaskMachine.Refusal.completed) { try machine.handle(.resume) }
        #expect(throws: TaskMachine.Refusal.completed) { try machine.handle(.cancel, Facts(inEngine: true)) }
    }

    @Test func aTaskHeldForARetryIsSuspendedThenResumedAtOnce() throws {
        var machine = TaskMachine(created: .running)
        _ = try step(&machine, .schedule)
        _ = try step(&machine, .admit)
        #expect(try step(&machine, .holdForRetry, Facts(inEngine: true)) == (.running, .retrying, [.countRetry, .hold, .persist, .admitNext]))
        // Suspended while held: the hold goes and the task waits, queued, for its resume.
        #expect(try step(&machine, .suspend, Facts(isHeld: true)) == (.suspended, .queued, [.leaveScheduler, .releaseHold, .persist]))
        #expect(try step(&machine, .holdDue) == (.suspended, .queued, []))
        // Resumed: scheduled now, not at the old date.
        #expect(try step(&machine, .resume) == (.running, .queued, [.schedule, .persist, .admitNext]))
        #expect(try step(&machine, .schedule) == (.running, .queued, [.enqueue]))
    }

    @Test func aTaskCreatedWithALaterBeginDateWaitsAndIsAnnouncedWhenDue() throws {
        var machine = TaskMachine(created: .running)
        #expect(try step(&machine, .schedule, Facts(beginDate: .ahead)) == (.running, .waiting, [.leaveScheduler, .holdUntilBeginDate]))
        #expect(try step(&machine, .holdDue, Facts(beginDate: .passed)) == (.running, .queued, [.emit(.willBeginDelayedRequest), .enqueue, .persist]))
    }

    @Test func aPausedTransferCancelledIsCanceledUntilTheEngineLetsItGo() throws {
        var machine = TaskMachine(created: .running)
        _ = try step(&machine, .schedule)
        _ = try step(&machine, .admit)
        #expect(try step(&machine, .suspend, Facts(inEngine: true)) == (.suspended, .connecting, [.engine(.pause), .persist]))
        #expect(try step(&machine, .cancel, Facts(inEngine: true)) == (.canceling, .connecting, [.persist, .engine(.cancel)]))
        // A second cancel while the engine stops it changes nothing; a resume neither.
        #expect(try step(&machine, .cancel, Facts(inEngine: true)) == (.canceling, .connecting, []))
        #expect(try step(&machine, .resume, Facts(inEngine: true)) == (.canceling, .connecting, []))
        #expect(try step(&machine, .detached, Facts(inEngine: true)) == (.canceling, .queued, [.leaveScheduler, .completeCancelled, .admitNext]))
        #expect(try step(&machine, .finish) == (.completed, .done, TaskMachineTableTests.finished))
    }

    @Test func aStreamIsNeverPausedAndOpensWhenResumed() throws {
        var machine = TaskMachine(created: .suspended)
        let stream = Facts(isStream: true)
        #expect(try step(&machine, .resume, stream) == (.running, .queued, [.startStream, .persist, .admitNext]))
        #expect(try step(&machine, .streamOpening, stream) == (.running, .connecting, [.recordStart, .engine(.openStream), .persist]))
        #expect(try step(&machine, .streamConnected, Facts(isStream: true, inEngine: true)) == (.running, .transferring, [.persist]))
        #expect(throws: TaskMachine.Refusal.streamNotSuspendable) { try machine.handle(.suspend, Facts(isStream: true, inEngine: true)) }
        #expect((machine.state, machine.phase) == (.running, .transferring))
    }
}
