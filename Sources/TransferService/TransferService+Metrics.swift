internal import Prometheus
internal import Synchronization
internal import TransferModel
internal import TransferEngine

extension TransferService {
    /// `GET /metrics`: every instrument of this daemon in Prometheus' text format, with the
    /// state figures read now.
    public func renderMetrics() -> [UInt8] {
        var snapshot = metricsSnapshot()
        snapshot.process = ProcessFigures.read()  // outside the service's lock: file reads
        return metrics.render(snapshot)
    }

    /// Task counts (the held ones from the table's census), queue depth, byte totals and held
    /// long-polls, in one lock acquisition.
    func metricsSnapshot() -> MetricsSnapshot {
        state.withLock { s in
            var snapshot = MetricsSnapshot()
            for (key, count) in s.tasks.census.counts {
                snapshot.tasks[MetricsSnapshot.TaskLabels(state: key.state, phase: key.phase, kind: key.kind, schedulingClass: key.schedulingClass), default: 0] += count
            }
            for (labels, count) in s.storedCompleted { snapshot.tasks[labels, default: 0] += count }
            snapshot.queuedByClass = s.scheduler.queuedByClass
            snapshot.runningByClass = s.scheduler.runningByClass
            snapshot.bytesByClass = s.rates.totals
            snapshot.heldLongPolls = s.heldLongPolls + (clusterWork?.waits.count ?? 0)
            snapshot.clusterNodes = membership.liveNodes
            if isClustered { snapshot.clusterLeases = s.tasks.keys.count { (s.tasks[$0]?.leaseEpoch ?? 0) > 0 } }
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
        if result == "failed", let code = task.error?.code { metrics.failures.increment(String(code)) }
        if task.error?.isNetworkPolicyRefusal == true {
            // A redirect hop was refused when the task had moved on from its first URL.
            let redirected = task.currentRequest.map { $0.url != task.originalRequest.url } ?? false
            metrics.networkPolicyRefused(task.kind == .stream ? .stream : redirected ? .redirect : .task)
        }
    }
}
