import Testing
import TestSupport
@testable import TransferModel

/// Every state and phase a task can be in, with every event and every combination of facts
/// (24 x 19 x 48 transitions): the machine's invariants hold in each, and no cell traps.
@Suite struct TaskMachineInvariantTests {
    typealias Event = TaskMachine.Event
    typealias Action = TaskMachine.Action

    /// Actions that send a task (again) towards the engine.
    static let goingOn: Set<Action> = [
        .schedule, .enqueue, .startStream, .startTransfer, .recordStart, .hold, .holdUntilBeginDate,
        .engine(.resume), .engine(.openStream),
    ]

    @Test(arguments: MachineStart.all, Event.allCases)
    func everyCellHasADefinedAnswer(_ start: MachineStart, _ event: Event) {
        for facts in TaskMachine.Facts.all {
            var machine = start.machine
            let answer = Result { () throws(TaskMachine.Refusal) in try machine.handle(event, facts) }
            let context = "\(start) \(event) [\(facts)]"
            switch answer {
            case .failure(let refusal):
                #expect(machine == start.machine, "a refusal changes nothing: \(context)")
                switch refusal {
                case .completed:
                    #expect(start.state == .completed && [.resume, .suspend, .cancel].contains(event), "\(context)")
                case .streamNotSuspendable:
                    #expect(start.state == .running && event == .suspend && facts.isStream, "\(context)")
                }
            case .success(let actions):
                check(start, event, facts, machine, actions, context)
            }
        }
    }

    private func check(_ start: MachineStart, _ event: Event, _ facts: TaskMachine.Facts, _ after: TaskMachine, _ actions: [Action], _ context: String) {
        if start.state == .completed {
            #expect(after == start.machine && actions.isEmpty, "completed is final: \(context)")
        }
        if start.isConsistent {
            #expect((after.phase == .done) == (after.state == .completed), "done iff completed: \(context) -> \(after)")
        }
        if after.state != start.state {
            let allowed: Set<[TaskState]> = [[.running, .suspended], [.suspended, .running], [.running, .canceling], [.suspended, .canceling],
                                             [.running, .completed], [.suspended, .completed], [.canceling, .completed]]
            #expect(allowed.contains([start.state, after.state]), "\(context) -> \(after)")
            #expect(actions.contains(.persist) || actions.contains(.fail(.unsupportedURL)), "a new state is stored: \(context)")
        }
        // Only these events change the state.
        let changesState: [Event: TaskState] = [.resume: .running, .suspend: .suspended, .cancel: .canceling, .finish: .completed]
        if after.state != start.state { #expect(changesState[event] == after.state, "\(context) -> \(after)") }
        if start.state == .canceling {
            #expect([.canceling, .completed].contains(after.state), "a canceled task never runs again: \(context)")
            #expect(Self.goingOn.isDisjoint(with: actions), "a canceled task never runs again: \(context) \(actions)")
        }
        if start.state == .suspended, event != .resume {
            #expect(Self.goingOn.isDisjoint(with: actions), "a suspended task goes on only when resumed: \(context) \(actions)")
        }
        // The engine is told to resume, pause or cancel only with the matching change of state.
        if actions.contains(.engine(.resume)) { #expect(start.state == .suspended && after.state == .running && facts.inEngine, "\(context)") }
        if actions.contains(.engine(.pause)) { #expect(start.state == .running && after.state == .suspended && facts.inEngine, "\(context)") }
        if actions.contains(.engine(.cancel)) { #expect(after.state == .canceling && start.state != .canceling, "\(context)") }
        // Commands to the engine go to a transfer it has, and a start only to one it has not.
        if actions.contains(.engine(.preempt)) || actions.contains(.engine(.pause)) { #expect(facts.inEngine, "\(context)") }
        if actions.contains(.engine(.openStream)) { #expect(!facts.inEngine, "\(context)") }
        // A follow-up that completes the task comes last (only the admission of others after it).
        for (index, action) in actions.enumerated() where action == .completeCancelled || action == .fail(.unsupportedURL) {
            #expect(actions[(index + 1)...].allSatisfy { $0 == .admitNext }, "\(context) \(actions)")
        }
        // A task completes only through `finish`, which records its outcome once.
        #expect(actions.contains(.recordCompletion) == (event == .finish && start.state != .completed), "\(context)")
        #expect(actions.count == Set(actions).count, "no action twice: \(context) \(actions)")
    }

    /// The invariants hold along any sequence too: a random walk of events from a new task.
    @Test(arguments: [TaskState.running, .suspended])
    func aLongWalkKeepsTheInvariants(_ created: TaskState) {
        var generator = SeededGenerator(seed: 17)
        var machine = TaskMachine(created: created)
        var wasCanceling = false
        for _ in 0..<20_000 {
            let event = Event.allCases.randomElement(using: &generator)!
            let facts = TaskMachine.Facts.all.randomElement(using: &generator)!
            let before = machine
            if (try? machine.handle(event, facts)) == nil { #expect(machine == before) }
            #expect((machine.phase == .done) == (machine.state == .completed), "\(before) \(event) -> \(machine)")
            if before.state == .completed { #expect(machine == before) }
            if wasCanceling { #expect([.canceling, .completed].contains(machine.state)) }
            wasCanceling = machine.state == .canceling || (wasCanceling && machine.state != .completed)
            if machine.state == .completed { machine = TaskMachine(created: created); wasCanceling = false }
        }
    }
}

/// A task's state and phase before an event.
struct MachineStart: Sendable, CustomStringConvertible {
    let state: TaskState
    let phase: TaskPhase
    var machine: TaskMachine { TaskMachine(restoring: state, phase: phase) }
    /// Phase `done` goes with state `completed` and only with it, as the service keeps them.
    var isConsistent: Bool { (phase == .done) == (state == .completed) }
    var description: String { "\(state)/\(phase)" }

    static let all = TaskState.allCases.flatMap { state in TaskPhase.allCases.map { MachineStart(state: state, phase: $0) } }
}

