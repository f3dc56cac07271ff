internal import Glibc
internal import FoundationEssentials
internal import JSONModel
internal import TransferModel
internal import TransferEngine

/// The service's side of `TaskMachine`: it feeds a task's events to the task's machine (the
/// only writer of `state` and `phase`) and carries out the actions it answers. Actions that need
/// data only their caller has (a hold's date, a transfer's job, a completion's error and body)
/// are carried out by that caller; `perform` does the rest.
extension TransferService {
    /// A client's command to task `id`: the machine's actions, or the 409 it refuses with.
    func command(_ s: inout ServiceState, task id: Int, _ event: TaskMachine.Event) throws -> [TaskMachine.Action] {
        guard let entry = s.tasks[id] else { return [] }
        let facts = facts(s, entry, for: event)
        do throws(TaskMachine.Refusal) {
            return try s.tasks[id]!.task.lifecycle.handle(event, facts)
        } catch {
            switch error {
            case .completed:
                throw ServiceError.conflict(code: "task_completed", message: "task \(id) has completed")
            case .streamNotSuspendable:
                throw ServiceError.conflict(code: "stream_not_suspendable", message: "a running stream task cannot be suspended; stop reading and writing, or cancel it")
            }
        }
    }

    /// Any other event for task `id` (the machine refuses only commands): its actions, [] when
    /// it changes nothing (an unknown or completed task among them).
    @discardableResult
    func transition(_ s: inout ServiceState, task id: Int, _ event: TaskMachine.Event, now: Date = Date()) -> [TaskMachine.Action] {
        guard let entry = s.tasks[id] else { return [] }
        let facts = facts(s, entry, for: event, now: now)
        // try?: the machine refuses only client commands (`command`), never these events.
        return (try? s.tasks[id]?.task.lifecycle.handle(event, facts)) ?? []
    }

    /// What the machine needs to know of the task beyond its state and phase.
    private func facts(_ s: ServiceState, _ entry: TaskEntry, for event: TaskMachine.Event, now: Date = Date()) -> TaskMachine.Facts {
        let task = entry.task
        var begin = TaskMachine.BeginDate.none
        if task.startedAt == nil, let date = task.earliestBeginDate { begin = date > now ? .ahead : .passed }
        return TaskMachine.Facts(
            isStream: task.kind == .stream, inEngine: entry.inEngine, isHeld: s.holds.hold(of: task.id) != nil,
            // Only a resume asks (parsing the URL on every transition would cost for nothing).
            urlSupported: event != .resume || RequestURL.isSupported(task.originalRequest.url),
            beginDate: begin)
    }

    func perform(_ actions: [TaskMachine.Action], task id: Int, _ s: inout ServiceState, _ deliveries: inout Deliveries) {
        for action in actions { perform(action, task: id, &s, &deliveries) }
    }

    /// Carries out one action that needs nothing from the caller.
    func perform(_ action: TaskMachine.Action, task id: Int, _ s: inout ServiceState, _ deliveries: inout Deliveries) {
        switch action {
        case .persist:
            changed(&s, task: id, persist: true, &deliveries)
        case .publish:
            changed(&s, task: id, persist: false, &deliveries)
        case .admitNext:
            admit(&s, &deliveries)
        case .schedule:
            schedule(&s, task: id, &deliveries)
        case .enqueue:
            enqueueTicket(&s, task: id)
        case .leaveScheduler:
            s.scheduler.remove(taskId: id)
        case .releaseHold:
            releaseHold(&s, task: id)
        case .holdUntilBeginDate:
            guard let begin = s.tasks[id]?.task.earliestBeginDate else { return }
            s.holds.insert(task: id, until: begin, phase: .waiting)
            armHoldTimer(&s)
        case .countRetry:
            s.tasks[id]?.task.retryCount += 1
        case .startStream:
            startStream(&s, task: id, &deliveries)
        case .recordStart:
            s.tasks[id]?.task.startedAt = Date()
        case .engine(.pause):
            engine.submit(.pause(taskId: id))
        case .engine(.resume):
            engine.submit(.resume(taskId: id))
        case .engine(.preempt):
            engine.submit(.preempt(taskId: id))
        case .engine(.cancel):
            engine.submit(.cancel(taskId: id, keepPartial: s.tasks[id]?.cancelKeepsPartial ?? false))
        case .emit(let type):
            guard let task = s.tasks[id]?.task else { return }
            emit(&s, session: task.sessionId, task: id, type, eventFields(type, of: task), &deliveries)
        case .fail(.unsupportedURL):
            complete(&s, task: id, error: TaskError(.unsupportedURL, "the URL scheme is not supported"), body: nil, &deliveries)
        case .completeCancelled:
            completeCancelled(&s, task: id, &deliveries)
        case .collectMetrics:
            guard let task = s.tasks[id]?.task else { return }
            collectMetrics(&s, task: task, &deliveries)
        case .checkInvalidation:
            guard let task = s.tasks[id]?.task else { return }
            checkInvalidation(&s, session: task.sessionId, &deliveries)
        case .hold, .startTransfer, .engine(.openStream), .recordCompletion:
            break  // carried out by the caller, which has their data (see above)
        }
    }

    /// The fields of an event a transition emits.
    private func eventFields(_ type: EventType, of task: TransferTask) -> [String: JSONValue] {
        switch type {
        case .didCompleteWithError: ["error": task.error.map(\.jsonValue) ?? .null]
        case .willBeginDelayedRequest: ["request": JSONValue(encoding: task.originalRequest)]
        default: [:]
        }
    }

    /// Completes a task the engine no longer has as cancelled: a download's partial file goes
    /// with resume data when the cancel asked for it (`cancelKeepsPartial`), else it is deleted.
    private func completeCancelled(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id] else { return }
        var error = TaskError(.cancelled, "cancelled")
        if entry.task.kind == .download {
            if entry.cancelKeepsPartial, let resume = checkpointedResume(of: entry.task) {
                error.resumeData = sealedResumeData(for: entry.task, at: resume)
                s.tasks[id]?.task.progress.bytesReceived = resume.offset
                clusterWork?.partials.release(id)  // at the name the resume data gives
            } else {
                unlink(partialPath(of: id))
            }
        }
        complete(&s, task: id, error: error, body: nil, &deliveries)
    }
}
