internal import Prometheus
internal import Synchronization

/// A counter family with one label, its series made on first use and kept: the registry would
/// hand back the same counter, but only after checking the name, labels and help again (a lock
/// and allocations on every increment). The label's values must be few (codes, results).
final class CounterFamily: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let name: String
    private let help: String
    private let label: String
    private let series = Mutex<[String: Counter]>([:])

    init(_ registry: PrometheusCollectorRegistry, name: String, label: String, help: String, madeAtZero: [String] = []) {
        self.registry = registry
        self.name = name
        self.label = label
        self.help = help
        // Made at zero, so the series is scraped (and can be alerted on) before its first count.
        for value in madeAtZero { _ = counter(value) }
    }

    func increment(_ value: String) { counter(value).increment() }

    private func counter(_ value: String) -> Counter {
        if let counter = series.withLock({ $0[value] }) { return counter }
        let counter = registry.makeCounter(
            descriptor: MetricNameDescriptor(namespace: "transferd", metricName: name, unitName: "total", helpText: help),
            labels: [(label, value)])
        series.withLock { $0[value] = counter }
        return counter
    }
}
