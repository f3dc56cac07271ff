internal import Prometheus

/// What the network policy stopped: a task's first request, a redirect hop, a stream task, a
/// webhook delivery (the `kind` label of `transferd_network_policy_refusals_total`).
enum NetworkPolicyRefusalKind: String, CaseIterable {
    case task, redirect, stream, webhook
}

extension TransferMetrics {
    /// A task, stream or webhook delivery ended because the network policy refused its connection.
    func networkPolicyRefused(_ kind: NetworkPolicyRefusalKind) {
        networkPolicyRefusals(kind).increment()
    }

    /// The registry returns the existing counter for a label set it has seen.
    @discardableResult
    func networkPolicyRefusals(_ kind: NetworkPolicyRefusalKind) -> Counter {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "transferd", metricName: "network_policy_refusals", unitName: "total",
                helpText: "Tasks, redirects, stream tasks and webhook deliveries that ended because the daemon's network policy (--deny-networks, --allow-networks) refused the address they were to connect to, by kind."),
            labels: [("kind", kind.rawValue)])
    }
}
