public import Prometheus
internal import Synchronization
internal import TransferModel
public import TransferStore

/// The daemon's Prometheus instruments and the registry `GET /metrics` renders. Owned by
/// `TransferService`, one per daemon; the API adds its HTTP instruments to the same `registry`.
///
/// swift-metrics' `MetricsSystem.bootstrap` is not used: it is process-global and may run once,
/// while the API tests start many daemons in one process, each of which must report its own
/// figures. Every instrument is made on this daemon's registry instead.
///
/// Figures that are state (tasks by state, queue depth, held long-polls) and the byte counters
/// are read from the service at scrape time (`TransferService.renderMetrics`); histograms and
/// the completion counter are fed as things happen.
public final class TransferMetrics: StoreInstruments {
    public let registry: PrometheusCollectorRegistry
    /// Store writer: time to commit one batch of queued writes (`Store.drain`).
    let storeCommit: DurationHistogram
    private let admissionWait: [SchedulingClass: DurationHistogram]
    let scrape: Mutex<ScrapeState>
    /// The completion counter of each label set seen (`completed`).
    private let completionCounters = Mutex<[CompletionLabels: Counter]>([:])
    /// Tasks that failed, by their URLError code (`code`).
    let failures: CounterFamily
    /// Attempts tried again after a transient failure, by the failure's code or HTTP status.
    let retries: CounterFamily
    /// Webhook POSTs, by result: delivered, failed (tried again later) or given_up.
    let webhookDeliveries: CounterFamily
    private struct CompletionLabels: Hashable {
        let kind: TaskKind
        let schedulingClass: SchedulingClass
        let result: String
    }

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        storeCommit = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "transferd", metricName: "store_commit_duration", unitName: "seconds",
                helpText: "Time the store writer takes to commit one batch of queued writes (progress checkpoints and state changes) in one SQLite transaction."),
            buckets: Self.fastBuckets)
        var admission: [SchedulingClass: DurationHistogram] = [:]
        for schedulingClass in SchedulingClass.allCases {
            admission[schedulingClass] = registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(
                    namespace: "transferd", metricName: "admission_wait", unitName: "seconds",
                    helpText: "Time a task waited in the queue before the scheduler started it, by scheduling class."),
                labels: [("class", schedulingClass.rawValue)],
                buckets: Self.waitBuckets)
        }
        admissionWait = admission
        scrape = Mutex(ScrapeState(registry: registry))
        failures = CounterFamily(registry, name: "task_failures", label: "code",
                                 help: "Tasks that completed with an error other than cancelled, by URLError code (-1001 timed out, -1004 cannot connect, ...).")
        retries = CounterFamily(registry, name: "task_retries", label: "reason",
                                help: "Attempts tried again after a transient failure (willRetry), by reason: the failure's URLError code, or http_STATUS for a status that asks for a retry (503, 429, ...).")
        webhookDeliveries = CounterFamily(registry, name: "webhook_deliveries", label: "result",
                                          help: "Webhook POSTs of session events, by result: delivered (2xx), failed (tried again later), given_up (its events skipped).",
                                          madeAtZero: ["delivered", "failed", "given_up"])
        // Made at zero, so the family is scraped (and can be alerted on) before a first failure.
        for reason in Self.storeFailureReasons { storeCommitFailures(reason: reason) }
        for kind in NetworkPolicyRefusalKind.allCases { networkPolicyRefusals(kind) }
    }

    /// A task left the queue for the engine after waiting `wait`.
    func admitted(after wait: Duration, _ schedulingClass: SchedulingClass) {
        admissionWait[schedulingClass]?.record(wait)
    }

    /// Why a store commit failed: the disk is full, the database is unavailable otherwise, or
    /// one row was refused for good (and dropped).
    static let storeFailureReasons = [StoreFailure.Kind.diskFull.rawValue, StoreFailure.Kind.unavailable.rawValue, "rejected"]

    /// A store commit attempt failed (`QueuedWriter`); `reason` is one of `storeFailureReasons`.
    public func storeCommitFailed(reason: String) {
        storeCommitFailures(reason: reason).increment()
    }

    public func storeCommitTook(_ duration: Duration) { storeCommit.record(duration) }

    /// The registry returns the existing counter for a label set it has seen.
    @discardableResult
    private func storeCommitFailures(reason: String) -> Counter {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "transferd", metricName: "store_commit_failures", unitName: "total",
                helpText: "Store commit attempts that failed, by reason (disk_full, unavailable, rejected); while they fail, writes are refused and /readyz answers 503."),
            labels: [("reason", reason)])
    }

    /// A task completed; `result` is succeeded, failed or cancelled.
    func completed(kind: TaskKind, _ schedulingClass: SchedulingClass, result: String) {
        let key = CompletionLabels(kind: kind, schedulingClass: schedulingClass, result: result)
        if let counter = completionCounters.withLock({ $0[key] }) { return counter.increment() }
        // The registry returns the existing counter for a label set it has seen (at most
        // 4 kinds x 4 classes x 3 results); asking it for every completion (a descriptor, a
        // label array and its lock each time) was 4 % of the engine updates thread.
        let counter = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "transferd", metricName: "tasks_completed", unitName: "total",
                helpText: "Tasks that completed, by kind, scheduling class and result (succeeded, failed, cancelled)."),
            labels: [("kind", kind.rawValue), ("class", schedulingClass.rawValue), ("result", result)])
        completionCounters.withLock { $0[key] = counter }
        counter.increment()
    }

    /// Sets the scrape-time figures from `snapshot`, then renders every family in Prometheus'
    /// text format (version 0.0.4). Concurrent scrapes take turns so one snapshot is rendered whole.
    func render(_ snapshot: MetricsSnapshot) -> [UInt8] {
        scrape.withLock { state in
            state.apply(snapshot)
            return registry.emitToBuffer()
        }
    }

    /// Store commits and HTTP requests: sub-millisecond to a few seconds.
    public static let fastBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    /// Admission waits: none at all to an hour behind a full queue.
    static let waitBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(10), .milliseconds(100), .seconds(1), .seconds(5), .seconds(10),
        .seconds(30), .seconds(60), .seconds(300), .seconds(900), .seconds(3600),
    ]
}
