internal import Prometheus
internal import Synchronization
internal import TransferService

/// `transferd_http_request_duration_seconds`: how long requests took from handling to answer,
/// by method, route pattern and status. Labels are bounded: the route is the pattern
/// (`/v1/tasks/{tid}`), or `unmatched` when no route's path matches; a method outside the
/// standard ones is `other`. Held long-polls count with the time they were held. Owned by
/// `APIHandler`, on the daemon's registry.
final class HTTPRequestMetrics: Sendable {
    private struct Series: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    private let registry: PrometheusCollectorRegistry
    /// The histograms made so far: the registry would hand back the same ones, but only after
    /// validating names, labels and help text again on every request.
    private let histograms = Mutex<[Series: DurationHistogram]>([:])
    /// A function, not a stored static: MetricNameDescriptor is not Sendable.
    private static func descriptor() -> MetricNameDescriptor { MetricNameDescriptor(
        namespace: "transferd", metricName: "http_request_duration", unitName: "seconds",
        helpText: "Time from receiving an API request to answering it, by method, route pattern and status.") }
    static let unmatched = "unmatched"
    private static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    init(registry: PrometheusCollectorRegistry) { self.registry = registry }

    static func methodLabel(_ method: String) -> String { methods.contains(method) ? method : "other" }

    func observe(method: String, route: String?, status: Int, duration: Duration) {
        let series = Series(method: Self.methodLabel(method), route: route ?? Self.unmatched, status: status)
        let histogram = histograms.withLock { made in
            if let histogram = made[series] { return histogram }
            let histogram = registry.makeDurationHistogram(
                descriptor: Self.descriptor(),
                labels: [("method", series.method), ("route", series.route), ("status", String(series.status))],
                buckets: TransferMetrics.fastBuckets)
            made[series] = histogram
            return histogram
        }
        histogram.record(duration)
    }
}
