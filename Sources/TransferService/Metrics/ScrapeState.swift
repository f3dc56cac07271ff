internal import BuildInfo
internal import Prometheus
internal import TransferModel

/// The scrape-time instruments of `TransferMetrics` and what the last scrape set them to. Owned
/// by `TransferMetrics` under its scrape lock.
struct ScrapeState: Sendable {
    private let registry: PrometheusCollectorRegistry
    /// Every `transferd_tasks` series set so far: one no task has now goes back to 0 rather than
    /// keeping its last count.
    private var taskGauges: [MetricsSnapshot.TaskLabels: Gauge] = [:]
    private let queueDepth: [SchedulingClass: Gauge]
    private let running: [SchedulingClass: Gauge]
    private let received: [SchedulingClass: Counter]
    private let sent: [SchedulingClass: Counter]
    private let heldLongPolls: Gauge
    private let clusterNodes: Gauge
    private let clusterLeases: Gauge
    /// The byte totals already added to the counters (counters only go up, so each scrape adds
    /// what the service counted since the previous one).
    private var counted: [SchedulingClass: ClassRates.Totals] = [:]
    /// `process_*`: the names Prometheus' client libraries give these, unprefixed.
    private let cpuSeconds: Counter
    private var countedCPUSeconds = 0.0
    private let residentBytes: Gauge
    private let virtualBytes: Gauge
    private let openDescriptors: Gauge
    private let maxDescriptors: Gauge
    private let threads: Gauge
    private let startTime: Gauge

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        // One series per scheduling class, made once: the class is the only label.
        func perClass<Metric>(_ make: (MetricNameDescriptor, [(String, String)]) -> Metric,
                              _ name: String, unit: String = "", help: String) -> [SchedulingClass: Metric] {
            let descriptor = MetricNameDescriptor(namespace: "transferd", metricName: name, unitName: unit, helpText: help)
            return Dictionary(uniqueKeysWithValues: SchedulingClass.allCases.map { ($0, make(descriptor, [("class", $0.rawValue)])) })
        }
        queueDepth = perClass(registry.makeGauge, "queue_depth",
                              help: "Tasks waiting in the scheduler's queue, by scheduling class.")
        running = perClass(registry.makeGauge, "transfers_running",
                           help: "Transfers the scheduler admitted and that hold a slot, by scheduling class.")
        received = perClass(registry.makeCounter, "received_bytes", unit: "total",
                            help: "Bytes received by transfers since the daemon started, by scheduling class.")
        sent = perClass(registry.makeCounter, "sent_bytes", unit: "total",
                        help: "Bytes sent by transfers since the daemon started, by scheduling class.")
        heldLongPolls = registry.makeGauge(
            descriptor: MetricNameDescriptor(namespace: "transferd", metricName: "long_polls_held", unitName: "",
                helpText: "Long-polls (task progress, session events, the task change feed) held open right now."))
        clusterNodes = registry.makeGauge(
            descriptor: MetricNameDescriptor(namespace: "transferd", metricName: "cluster_nodes", unitName: "",
                helpText: "Daemons sharing this one's database that were heard from within the lease timeout, at this one's last heartbeat (1 on SQLite)."))
        clusterLeases = registry.makeGauge(
            descriptor: MetricNameDescriptor(namespace: "transferd", metricName: "cluster_leases", unitName: "",
                helpText: "Tasks this node holds under a lease in its cluster (runs, or has taken for a command); 0 on SQLite."))
        func processFigure(_ name: String, unit: String = "", _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "process", metricName: name, unitName: unit, helpText: help)
        }
        cpuSeconds = registry.makeCounter(descriptor: processFigure("cpu", unit: "seconds_total", "User and system CPU time the daemon has used, in seconds."))
        residentBytes = registry.makeGauge(descriptor: processFigure("resident_memory", unit: "bytes", "Resident memory size of the daemon, in bytes."))
        virtualBytes = registry.makeGauge(descriptor: processFigure("virtual_memory", unit: "bytes", "Virtual memory size of the daemon, in bytes."))
        openDescriptors = registry.makeGauge(descriptor: processFigure("open_fds", "File descriptors the daemon has open."))
        maxDescriptors = registry.makeGauge(descriptor: processFigure("max_fds", "The daemon's limit on open file descriptors (RLIMIT_NOFILE, soft)."))
        threads = registry.makeGauge(descriptor: processFigure("threads", "Threads of the daemon's process."))
        startTime = registry.makeGauge(descriptor: processFigure("start_time", unit: "seconds", "When the daemon started, in seconds since 1970."))
        // Always 1; its labels say what is running (join on it to see a version in any graph).
        registry.makeGauge(
            descriptor: MetricNameDescriptor(namespace: "transferd", metricName: "build_info", unitName: "",
                helpText: "The daemon's version and the git commit it was built from; always 1."),
            labels: [("version", BuildInfo.version), ("commit", BuildInfo.commit)]).set(Int64(1))
    }

    mutating func apply(_ snapshot: MetricsSnapshot) {
        for (labels, gauge) in taskGauges where snapshot.tasks[labels] == nil { gauge.set(Int64(0)) }
        for (labels, count) in snapshot.tasks {
            gauge(for: labels).set(Int64(count))
        }
        for schedulingClass in SchedulingClass.allCases {
            queueDepth[schedulingClass]?.set(Int64(snapshot.queuedByClass[schedulingClass] ?? 0))
            running[schedulingClass]?.set(Int64(snapshot.runningByClass[schedulingClass] ?? 0))
            let now = snapshot.bytesByClass[schedulingClass] ?? ClassRates.Totals()
            let before = counted[schedulingClass] ?? ClassRates.Totals()
            if now.received > before.received { received[schedulingClass]?.increment(by: Int64(now.received - before.received)) }
            if now.sent > before.sent { sent[schedulingClass]?.increment(by: Int64(now.sent - before.sent)) }
            counted[schedulingClass] = ClassRates.Totals(received: max(now.received, before.received), sent: max(now.sent, before.sent))
        }
        heldLongPolls.set(Int64(snapshot.heldLongPolls))
        clusterNodes.set(Int64(snapshot.clusterNodes))
        clusterLeases.set(Int64(snapshot.clusterLeases))
        let process = snapshot.process
        if let cpu = process.cpuSeconds, cpu > countedCPUSeconds {
            cpuSeconds.increment(by: cpu - countedCPUSeconds)
            countedCPUSeconds = cpu
        }
        if let value = process.residentBytes { residentBytes.set(Int64(value)) }
        if let value = process.virtualBytes { virtualBytes.set(Int64(value)) }
        if let value = process.openDescriptors { openDescriptors.set(Int64(value)) }
        if let value = process.maxDescriptors { maxDescriptors.set(Int64(value)) }
        if let value = process.threads { threads.set(Int64(value)) }
        if let value = process.startTime { startTime.set(value) }
    }

    private mutating func gauge(for labels: MetricsSnapshot.TaskLabels) -> Gauge {
        if let gauge = taskGauges[labels] { return gauge }
        let gauge = registry.makeGauge(
            descriptor: MetricNameDescriptor(namespace: "transferd", metricName: "tasks", unitName: "",
                helpText: "Tasks the daemon holds, by state, phase, kind and scheduling class."),
            labels: [("state", labels.state.rawValue), ("phase", labels.phase.rawValue),
                     ("kind", labels.kind.rawValue), ("class", labels.schedulingClass.rawValue)])
        taskGauges[labels] = gauge
        return gauge
    }
}
