internal import TransferModel

/// The figures `GET /metrics` reads from the service's state at scrape time, taken in one lock
/// acquisition (`TransferService.metricsSnapshot`). A value; `ScrapeState` turns it into gauges
/// and counters.
struct MetricsSnapshot: Sendable, Equatable {
    /// What a task is, as the `transferd_tasks` gauge labels it (at most 4 x 6 x 4 x 4 series).
    struct TaskLabels: Sendable, Hashable {
        var state: TaskState
        var phase: TaskPhase
        var kind: TaskKind
        var schedulingClass: SchedulingClass
    }

    var tasks: [TaskLabels: Int] = [:]
    var queuedByClass: [SchedulingClass: Int] = [:]
    var runningByClass: [SchedulingClass: Int] = [:]
    /// Bytes received and sent since start, per class (the totals `GET /v1/stats` serves).
    var bytesByClass: [SchedulingClass: ClassRates.Totals] = [:]
    var heldLongPolls = 0
    /// Tasks this node holds under a lease (a cluster's node).
    var clusterLeases = 0
    /// Daemons live on the store, as the last heartbeat saw them (1 on SQLite).
    var clusterNodes = 1
    /// The process's CPU, memory, descriptors and threads (`process_*`).
    var process = ProcessFigures()
}
