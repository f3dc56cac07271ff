internal import Prometheus
internal import TransferCore

/// `transferd_http_request_duration_seconds`: how long requests took from handling to answer,
/// by method, route pattern and status. Labels are bounded: the route is the pattern
/// (`/v1/tasks/{tid}`), or `unmatched` when no route's path matches; a method outside the
/// standard ones is `other`. Held long-polls count with the time they were held. Owned by
/// `APIHandler`, on the daemon's registry.
struct HTTPRequestMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    /// A function, not a stored static: MetricNameDescriptor is not Sendable.
    private static func descriptor() -> MetricNameDescriptor { MetricNameDescriptor(
        namespace: "transferd", metricName: "http_request_duration", unitName: "seconds",
        helpText: "Time from receiving an API request to answering it, by method, route pattern and status.") }
    static let unmatched = "unmatched"
    private static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    init(registry: PrometheusCollectorRegistry) { self.registry = registry }

    static func methodLabel(_ method: String) -> String { methods.contains(method) ? method : "other" }

    func observe(method: String, route: String?, status: Int, duration: Duration) {
        // The registry hands back the histogram it already has for a label set.
        registry.makeDurationHistogram(
            descriptor: Self.descriptor(),
            labels: [("method", Self.methodLabel(method)), ("route", route ?? Self.unmatched), ("status", String(status))],
            buckets: TransferMetrics.fastBuckets
        ).record(duration)
    }
}
