import Testing
@testable import TransferModel

/// The transition table of `TaskMachine`'s doc comment, row by row: each row is checked in
/// every phase of its state (no transition depends on the phase), and every (event, state)
/// pair has a row.
@Suite struct TaskMachineTableTests {
    typealias Facts = TaskMachine.Facts

    static let finished: [TaskMachine.Action] = [.leaveScheduler, .releaseHold, .recordCompletion, .persist, .collectMetrics,
                                                 .emit(.didCompleteWithError), .checkInvalidation, .admitNext]
    static let plain = Facts()
    static let inEngine = Facts(inEngine: true)

    static let rows: [TableRow] = [
        // Client commands.
        TableRow(.resume, .running, to: .same),
        TableRow(.resume, .suspended, Facts(isStream: true), to: .moved(.running, nil, [.startStream, .persist, .admitNext])),
        TableRow(.resume, .suspended, inEngine, to: .moved(.running, nil, [.engine(.resume), .persist, .admitNext])),
        TableRow(.resume, .suspended, to: .moved(.running, nil, [.schedule, .persist, .admitNext])),
        TableRow(.resume, .suspended, Facts(urlSupported: false), to: .moved(.running, nil, [.fail(.unsupportedURL)])),
        TableRow(.resume, .canceling, inEngine, to: .same),
        TableRow(.resume, .completed, to: .refused(.completed)),
        TableRow(.suspend, .running, Facts(isStream: true, inEngine: true), to: .refused(.streamNotSuspendable)),
        TableRow(.suspend, .running, inEngine, to: .moved(.suspended, nil, [.engine(.pause), .persist])),
        TableRow(.suspend, .running, Facts(isHeld: true), to: .moved(.suspended, .queued, [.leaveScheduler, .releaseHold, .persist])),
        TableRow(.suspend, .running, to: .moved(.suspended, nil, [.leaveScheduler, .persist])),
        TableRow(.suspend, .suspended, Facts(isStream: true), to: .same),
        TableRow(.suspend, .canceling, inEngine, to: .same),
        TableRow(.suspend, .completed, to: .refused(.completed)),
        TableRow(.cancel, .running, inEngine, to: .moved(.canceling, nil, [.persist, .engine(.cancel)])),
        TableRow(.cancel, .running, Facts(isHeld: true), to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.cancel, .suspended, inEngine, to: .moved(.canceling, nil, [.persist, .engine(.cancel)])),
        TableRow(.cancel, .suspended, to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.cancel, .canceling, inEngine, to: .same),
        TableRow(.cancel, .canceling, to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.cancel, .completed, to: .refused(.completed)),
        // The scheduler, holds and their timer.
        TableRow(.schedule, .running, to: .moved(nil, .queued, [.enqueue])),
        TableRow(.schedule, .running, Facts(beginDate: .passed), to: .moved(nil, .queued, [.enqueue])),
        TableRow(.schedule, .running, Facts(beginDate: .ahead), to: .moved(nil, .waiting, [.leaveScheduler, .holdUntilBeginDate])),
        TableRow(.schedule, .suspended, to: .same),
        TableRow(.schedule, .canceling, to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.schedule, .completed, to: .same),
        TableRow(.enqueue, .running, to: .moved(nil, .queued, [.enqueue])),
        TableRow(.enqueue, .suspended, to: .moved(nil, .queued, [])),
        TableRow(.enqueue, .canceling, to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.enqueue, .completed, to: .same),
        TableRow(.admit, .running, to: .moved(nil, .connecting, [.recordStart, .startTransfer])),
        TableRow(.admit, .suspended, to: .moved(nil, nil, [.leaveScheduler])),
        TableRow(.admit, .canceling, to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.admit, .completed, to: .same),
        TableRow(.preempt, .running, inEngine, to: .moved(nil, .queued, [.engine(.preempt), .emit(.wasPreempted), .persist])),
        TableRow(.preempt, .running, to: .same),
        TableRow(.preempt, .suspended, inEngine, to: .moved(nil, .queued, [.engine(.preempt), .emit(.wasPreempted), .persist])),
        TableRow(.preempt, .canceling, inEngine, to: .moved(nil, .queued, [.engine(.preempt), .emit(.wasPreempted), .persist])),
        TableRow(.preempt, .completed, inEngine, to: .same),
        TableRow(.holdForRetry, .running, inEngine, to: .moved(nil, .retrying, [.countRetry, .hold, .persist, .admitNext])),
        TableRow(.holdForRetry, .suspended, to: .same),
        TableRow(.holdForRetry, .canceling, to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.holdForRetry, .completed, to: .same),
        TableRow(.holdForConnectivity, .running, inEngine, to: .moved(nil, .waiting, [.hold, .persist, .admitNext])),
        TableRow(.holdForConnectivity, .suspended, to: .same),
        TableRow(.holdForConnectivity, .canceling, to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.holdForConnectivity, .completed, to: .same),
        TableRow(.holdDue, .running, to: .moved(nil, .queued, [.enqueue, .persist])),
        TableRow(.holdDue, .running, Facts(beginDate: .passed), to: .moved(nil, .queued, [.emit(.willBeginDelayedRequest), .enqueue, .persist])),
        TableRow(.holdDue, .suspended, to: .same),
        TableRow(.holdDue, .canceling, to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.holdDue, .completed, to: .same),
        TableRow(.streamOpening, .running, Facts(isStream: true), to: .moved(nil, .connecting, [.recordStart, .engine(.openStream), .persist])),
        TableRow(.streamOpening, .running, Facts(isStream: true, inEngine: true), to: .same),
        TableRow(.streamOpening, .suspended, Facts(isStream: true), to: .same),
        TableRow(.streamOpening, .canceling, Facts(isStream: true), to: .moved(nil, nil, [.completeCancelled])),
        TableRow(.streamOpening, .completed, Facts(isStream: true), to: .same),
        // The engine let the transfer go.
        TableRow(.detached, .running, inEngine, to: .moved(nil, .queued, [.leaveScheduler, .enqueue, .persist, .admitNext])),
        TableRow(.detached, .suspended, inEngine, to: .moved(nil, .queued, [.leaveScheduler, .persist, .admitNext])),
        TableRow(.detached, .canceling, inEngine, to: .moved(nil, .queued, [.leaveScheduler, .completeCancelled, .admitNext])),
        // Restart recovery.
        TableRow(.reset, .running, to: .moved(nil, .queued, [])),
        TableRow(.reset, .suspended, to: .moved(nil, .queued, [])),
        TableRow(.reset, .canceling, to: .moved(nil, .queued, [])),
        TableRow(.reset, .completed, to: .same),
    ] + engineRows

    /// The engine's updates act alike in every state but the last.
    static let engineRows: [TableRow] = [TaskState.running, .suspended, .canceling].flatMap { state in [
        TableRow(.responseReceived, state, inEngine, to: .moved(nil, .transferring, [.publish])),
        TableRow(.streamConnected, state, inEngine, to: .moved(nil, .transferring, [.persist])),
        TableRow(.uploadResumed, state, inEngine, to: .moved(nil, .transferring, [.persist])),
        TableRow(.servedFromCache, state, to: .moved(nil, .transferring, [.persist])),
        TableRow(.uploadRetrying, state, inEngine, to: .moved(nil, .retrying, [.publish])),
        TableRow(.finish, state, to: .moved(.completed, .done, finished)),
    ] } + [TaskMachine.Event.responseReceived, .streamConnected, .uploadResumed, .servedFromCache, .uploadRetrying, .finish, .detached].map {
        TableRow($0, .completed, to: .same)
    }

    @Test(arguments: rows)
    func aRowHoldsInEveryPhaseOfItsState(_ row: TableRow) {
        for phase in TaskPhase.allCases {
            var machine = TaskMachine(restoring: row.state, phase: phase)
            let answer = Result { () throws(TaskMachine.Refusal) in try machine.handle(row.event, row.facts) }
            switch (row.to, answer) {
            case (.refused(let expected), .failure(let refusal)):
                #expect(refusal == expected)
            case (.same, .success(let actions)):
                #expect(actions.isEmpty && machine == TaskMachine(restoring: row.state, phase: phase), "from \(phase)")
            case (.moved(let state, let newPhase, let expected), .success(let actions)):
                #expect(machine.state == state ?? row.state, "from \(phase)")
                #expect(machine.phase == newPhase ?? phase, "from \(phase)")
                #expect(actions == expected, "from \(phase)")
            default:
                Issue.record("from \(phase): expected \(row.to), got \(answer)")
            }
        }
    }

    @Test func everyEventInEveryStateHasARow() {
        let covered = Set(Self.rows.map { "\($0.event) \($0.state)" })
        for event in TaskMachine.Event.allCases {
            for state in TaskState.allCases {
                #expect(covered.contains("\(event) \(state)"), "no row for \(event) in \(state)")
            }
        }
        #expect(TaskMachine.Event.allCases.count * TaskState.allCases.count * TaskPhase.allCases.count == 456, "the doc comment's size")
    }
}

/// One row of the table: an event in a state, with facts, and what follows.
struct TableRow: Sendable, CustomStringConvertible {
    enum Outcome: Sendable {
        /// Ignored: no change, no action.
        case same
        /// Refused with this answer.
        case refused(TaskMachine.Refusal)
        /// The new state and phase (nil: unchanged) and the actions.
        case moved(TaskState?, TaskPhase?, [TaskMachine.Action])
    }

    let event: TaskMachine.Event
    let state: TaskState
    let facts: TaskMachine.Facts
    let to: Outcome

    init(_ event: TaskMachine.Event, _ state: TaskState, _ facts: TaskMachine.Facts = TaskMachine.Facts(), to: Outcome) {
        (self.event, self.state, self.facts, self.to) = (event, state, facts, to)
    }

    var description: String { "\(event) in \(state) [\(facts)]" }
}
