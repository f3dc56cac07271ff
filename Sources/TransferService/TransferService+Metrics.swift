internal import Prometheus
internal import Synchronization
internal import TransferModel
internal import TransferEngine

extension TransferService {
    /// `GET /metrics`: every instrument of this daemon in Prometheus' text format, with the
    /// state figures read now.
    public func renderMetrics() -> [UInt8] {
        metrics.render(metricsSnapshot())
    }

    /// Task counts, queue depth, byte totals and held long-polls, in one lock acquisition.
    func metricsSnapshot() -> MetricsSnapshot {
        state.withLock { s in
            var snapshot = MetricsSnapshot()
            for id in s.tasks.keys {
                // Read in place: a copy of each held task retains and releases all of its fields.
                guard let taskState = s.tasks[id]?.task.state, let phase = s.tasks[id]?.task.phase,
                      let kind = s.tasks[id]?.task.kind, let schedulingClass = s.tasks[id]?.task.schedulingClass else { continue }
                snapshot.tasks[MetricsSnapshot.TaskLabels(state: taskState, phase: phase, kind: kind, schedulingClass: schedulingClass), default: 0] += 1
            }
            for (labels, count) in s.storedCompleted { snapshot.tasks[labels, default: 0] += count }
            snapshot.queuedByClass = s.scheduler.queuedByClass
            snapshot.runningByClass = s.scheduler.runningByClass
            snapshot.bytesByClass = s.rates.totals
            snapshot.heldLongPolls = s.heldLongPolls
            return snapshot
        }
    }

    /// Counts a completed task by its outcome (under the lock, from `complete`).
    func countCompletion(_ task: TransferTask) {
        let result = switch task.error?.code {
        case nil: "succeeded"
        case URLErrorCode.cancelled.rawValue: "cancelled"
        default: "failed"
        }
        metrics.completed(kind: task.kind, task.schedulingClass, result: result)
        if task.error?.isNetworkPolicyRefusal == true {
            // A redirect hop was refused when the task had moved on from its first URL.
            let redirected = task.currentRequest.map { $0.url != task.originalRequest.url } ?? false
            metrics.networkPolicyRefused(task.kind == .stream ? .stream : redirected ? .redirect : .task)
        }
    }
}
