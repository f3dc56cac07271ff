internal import FoundationEssentials
internal import Synchronization
internal import JSONModel
public import TransferModel
internal import TransferEngine
internal import TransferStore

/// Task metrics: collected from the engine's transactions when a task completes, kept with the
/// task (the store, or the entry for ephemeral sessions), served by GET /v1/tasks/{tid}/metrics.
extension TransferService {
    /// Builds the completing task's metrics, keeps them, and emits didFinishCollectingMetrics
    /// (URLSession calls it right before didCompleteWithError). Under the lock.
    func collectMetrics(_ s: inout ServiceState, task: TransferTask, _ deliveries: inout Deliveries) {
        let id = task.id
        let transactions = s.tasks[id]?.transactions ?? []
        s.tasks[id]?.transactions = []
        let end = task.completedAt ?? Date()
        // Every transaction but the last that answered with a redirect was followed.
        let redirects = transactions.dropLast().filter { Transfer.redirectStatuses.contains($0.response?.statusCode ?? 0) }.count
        let metrics = TaskMetrics(
            taskInterval: .init(start: MetricsDate(task.createdAt), duration: max(0, end.timeIntervalSince(task.createdAt))),
            redirectCount: redirects, transactionMetrics: transactions)
        if isRecorded(s, session: task.sessionId) {
            store.enqueue(.saveMetrics(taskId: id, metrics: metrics))
        } else {
            s.tasks[id]?.metrics = metrics
        }
        emit(&s, session: task.sessionId, task: id, .didFinishCollectingMetrics, metrics.eventFields, &deliveries)
    }

    /// A completed task's metrics; 409 task_not_completed before it completes (URLSession
    /// reports metrics only then).
    public func metrics(task id: Int, owner: String?) throws -> TaskMetrics {
        let (task, entry) = try visibleRecord(id, owner: owner)
        let kept = entry?.metrics
        guard task.state == .completed else {
            throw ServiceError.conflict(code: "task_not_completed", message: "task \(id) is \(task.state.rawValue); its metrics are collected when it completes")
        }
        if let kept { return kept }
        store.flush()
        if let stored = try store.metrics(taskId: id) { return stored }
        // Completed before metrics were kept (an older daemon): the interval, no transactions.
        let end = task.completedAt ?? task.createdAt
        return TaskMetrics(taskInterval: .init(start: MetricsDate(task.createdAt), duration: end.timeIntervalSince(task.createdAt)),
                           redirectCount: 0, transactionMetrics: [])
    }
}
