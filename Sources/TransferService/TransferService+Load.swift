internal import Glibc
internal import Synchronization
internal import FoundationEssentials
internal import TransferModel
internal import TransferStore

extension TransferService {
    /// Loads sessions, tasks and recent events, and settles tasks a previous run left unfinished:
    /// a data task that had reached the network when the daemon died completes with
    /// networkConnectionLost (its bytes are gone and its request may not be repeatable); one still
    /// queued had sent nothing and simply waits for admission again. In background sessions
    /// downloads go on from their checkpoint and uploads with a repeatable body start again.
    ///
    /// Only unfinished tasks are read into memory; completed ones stay in the store, counted from
    /// its summary (their tenants' bytes, /metrics), so a start costs what is unfinished, not
    /// what is kept.
    func load() throws {
        let sessions = try store.loadSessions()
        // In a cluster unfinished tasks wait in the store's queue, or run on other nodes: a node
        // holds only what it claims.
        let tasks = isClustered ? [] : try store.loadUnfinishedTasks()
        let completed = try store.completedTaskSummary()
        let feedFloor = try store.feedSeqFloor()
        let events = try store.loadRecentEvents(limit: configuration.eventRetention)
        let maxSeq = try store.maxEventSeq()
        let maxTaskId = try store.maxTaskId()
        state.withLock { s in
            // In the store's creation order: createdAt has whole seconds, so sorting by it (and
            // the random id) reordered sessions made within one second, and the list with them.
            for session in sessions { know(&s, session) }
            if s.sessions[Session.sharedID] == nil {
                let shared = Session(id: Session.sharedID, kind: .default, state: .active, configuration: SessionConfiguration(), createdAt: Date(), version: 0)
                saveSession(&s, shared)
                s.sessionOrder.insert(Session.sharedID, at: 0)
            }
            s.taskChanges = TaskChangeLog(after: feedFloor)
            s.feedSeqReserved = feedFloor
            reserveFeedStamps(&s)
            for summary in completed {
                if !isClustered { s.usage.addStored(owner: summary.owner, bytes: summary.heldBytes) }
                s.storedCompleted[MetricsSnapshot.TaskLabels(state: .completed, phase: .done, kind: summary.kind, schedulingClass: summary.schedulingClass), default: 0] += summary.tasks
            }
            for (task, body) in tasks {
                hold(&s, stored: task, requestBody: body)
                s.nextTaskId = max(s.nextTaskId, task.id + 1)
            }
            reserveFeedStamps(&s)  // the loaded tasks took a stamp each
            for event in events {
                // A stored row may hold events the client acknowledged after it was written
                // (`EventRows`): the session's record says how far.
                guard event.seq > s.sessions[event.sessionId]?.acknowledgedEventSeq ?? 0 else { continue }
                // In place: a copy of the log per event made the start-up quadratic in the events kept.
                _ = s.events[event.sessionId, default: EventLog(capacity: configuration.eventRetention)].append(event)
            }
            s.nextEventSeq = maxSeq + 1
            s.nextTaskId = max(s.nextTaskId, maxTaskId + 1)
            if isClustered {
                // Numbers come in blocks from the store: the first one taken starts a block.
                (s.taskIdsEnd, s.eventSeqsEnd) = (0, 0)
            }
            var deliveries = Deliveries()
            for id in s.tasks.keys.sorted() {
                recover(&s, task: id, &deliveries)
            }
            for id in s.sessionOrder { checkInvalidation(&s, session: id, &deliveries) }
        }
        store.flush()
        removeOrphanedPartialFiles()
        expireTasks(now: Date())
    }

    /// Puts a stored session in memory (once), after the sessions already there. Sessions stored
    /// before the URL cache existed get their kind's cache.
    func know(_ s: inout ServiceState, _ session: Session) {
        guard s.sessions[session.id] == nil else { return }
        var session = session
        session.configuration.urlCache = urlCaches.resolve(session.configuration.urlCache, kind: session.kind)
        s.sessions[session.id] = session
        s.sessionOrder.append(session.id)
    }

    /// Holds a stored task in memory as it was stored (loaded at start, or claimed), not yet
    /// settled (`recover`). Its id takes its place in its session's ascending list: at the end
    /// at start, where ids come in order.
    func hold(_ s: inout ServiceState, stored task: TransferTask, requestBody: Data?) {
        var entry = TaskEntry(task: task, requestBody: requestBody)
        entry.urlLogin = credentials.openLogin(of: task)
        s.tasks[task.id] = entry
        _ = s.taskChanges.note(task)  // no waiter yet
        if countsUsageHere(s, task) { s.usage.note(task) }
        // Changed in place: a copy of the list taken out would be copied whole for every task.
        let place = s.tasksBySession[task.sessionId]?.ascendingIndex(after: task.id) ?? 0
        s.tasksBySession[task.sessionId, default: []].insert(task.id, at: place)
    }

    func recover(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id] else { return }
        let task = entry.task
        if task.kind == .stream, task.state != .completed, task.startedAt != nil || task.state != .suspended {
            // A TCP connection does not outlive its process: the stream ended with the daemon.
            // (One created suspended that never connected can still be resumed.)
            complete(&s, task: id, error: TaskError(.networkConnectionLost, "the daemon stopped: a stream task's connection does not survive a restart"), body: nil, &deliveries)
            return
        }
        switch task.state {
        case .completed:
            return
        case .suspended:
            // A paused transfer's connection is gone; resuming starts it again, from its last
            // checkpoint for a download that has one.
            if task.phase != .queued {
                let resume = checkpointedResume(of: task)
                reset(&s, task: id)
                s.tasks[id]?.task.resume = resume
                if task.kind == .download && resume == nil { unlink(partialPath(of: id)) }
                changed(&s, task: id, persist: true, &deliveries)  // a new version: its served state changed
            }
        case .running where task.phase == .queued || (task.phase == .waiting && task.startedAt == nil):
            // Queued again; one waiting for its earliestBeginDate waits on (holds are not stored).
            schedule(&s, task: id, &deliveries)
        case .running where task.resumable == nil && (task.phase == .retrying || task.phase == .waiting):
            // Held for a retry or for connectivity (holds are not stored): it was out of the
            // engine, so it simply tries again now, a download from its partial file if whole.
            let resume = checkpointedResume(of: task)
            reset(&s, task: id)
            s.tasks[id]?.task.resume = resume
            if task.kind == .download && resume == nil { unlink(partialPath(of: id)) }
            enqueue(&s, task: id, &deliveries)
            changed(&s, task: id, persist: true, &deliveries)
        case .running where task.resumable != nil:
            // A tus upload's state is on its server: in every kind of session it carries on by
            // itself, asking the server (HEAD) how much it has.
            reset(&s, task: id)
            enqueue(&s, task: id, &deliveries)
            changed(&s, task: id, persist: true, &deliveries)
        case .running:
            if let resume = checkpointedResume(of: task) {
                if s.sessions[task.sessionId]?.kind == .background {
                    // Background sessions carry on by themselves from the last checkpoint.
                    reset(&s, task: id)
                    s.tasks[id]?.task.resume = resume
                    enqueue(&s, task: id, &deliveries)
                    changed(&s, task: id, persist: true, &deliveries)
                } else {
                    // Others report the failure, with resume data to continue from the checkpoint.
                    var error = TaskError(.networkConnectionLost, "the daemon stopped while the task was running")
                    error.resumeData = sealedResumeData(for: task, at: resume)
                    s.tasks[id]?.task.resume = resume
                    s.tasks[id]?.task.progress.bytesReceived = resume.offset
                    complete(&s, task: id, error: error, body: nil, &deliveries)
                }
                return
            }
            if task.kind == .download { unlink(partialPath(of: id)) }
            let background = s.sessions[task.sessionId]?.kind == .background
            if background && task.kind == .download {
                // Stopped before its first checkpoint (at most about a second in): nothing on disk
                // is known good, so it starts over, by itself, as it would have carried on from a
                // checkpoint. Failing it instead made one early kill -9 end the download for good.
                restartFromZero(&s, task: id, &deliveries)
                return
            }
            if task.bodyStream != nil {
                // In every kind of session: its chunks went to the server as they came and the
                // client has moved on, so nothing can send that body again from the start.
                let message = "the daemon stopped while sending a client-streamed body (body-chunks), which cannot be sent again from the start: create a new task and stream the body again"
                complete(&s, task: id, error: TaskError(.networkConnectionLost, message), body: nil, &deliveries)
                return
            }
            if background && task.kind == .upload {
                // The server may hold a truncated body, and plain HTTP has no way to continue
                // one, so a body the daemon can read again (inline, blob, file, form) is sent
                // again from its first byte, as the system retries URLSession's background uploads.
                restartFromZero(&s, task: id, &deliveries)
                return
            }
            // Data tasks (background ones too: URLSession does not carry a background session's
            // data task across the end of its process either) and tasks of other sessions.
            let message = task.decision.map { "the daemon stopped while the task waited for its \($0.kind.rawValue) decision \($0.id)" }
            s.tasks[id]?.task.decision = nil
            complete(&s, task: id, error: TaskError(.networkConnectionLost, message ?? "the daemon stopped while the task was running"), body: nil, &deliveries)
        case .canceling:
            if task.kind == .download { unlink(partialPath(of: id)) }
            complete(&s, task: id, error: TaskError(.cancelled, "cancelled"), body: nil, &deliveries)
        }
    }

    /// Queues a task that was running again, from its first byte, as a new version.
    private func restartFromZero(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        reset(&s, task: id)
        s.tasks[id]?.task.resume = nil
        enqueue(&s, task: id, &deliveries)
        changed(&s, task: id, persist: true, &deliveries)
    }

    /// Clears what a started transfer had received, so it can start over, queued again.
    func reset(_ s: inout ServiceState, task id: Int) {
        transition(&s, task: id, .reset)
        clearAttempt(&s, task: id)
    }

    /// Clears what a started transfer had received: its response, current request and progress.
    func clearAttempt(_ s: inout ServiceState, task id: Int) {
        guard var task = s.tasks[id]?.task else { return }
        task.response = nil
        task.currentRequest = nil
        task.decision = nil  // the transfer that asked is gone; the next one asks again
        task.progress = TaskProgress()
        task.progress.bytesExpectedToSend = task.originalRequest.bodyLength
        s.tasks[id]?.task = task
    }
}
