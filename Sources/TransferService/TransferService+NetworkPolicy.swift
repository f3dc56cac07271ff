internal import FoundationEssentials
public import TransferModel
internal import TransferEngine

extension TransferService {
    /// Where this daemon's tasks, stream tasks and webhooks may connect (`NetworkPolicy`).
    public var networkPolicy: NetworkPolicy { configuration.networkPolicy }

    /// A webhook URL whose host is an address the network policy refuses is refused when it is
    /// subscribed (400 `network_policy`), rather than failing every delivery; a name is judged
    /// at each connection (the gate), as is every address anyway.
    func checkNetworkPolicy(webhookURL: String) throws {
        guard let host = URL(string: webhookURL)?.host, let rule = configuration.networkPolicy.refusal(forURLHost: host) else { return }
        throw InputError.refused(field: "webhook.url", code: TaskError.networkPolicyReason,
                                 message: "webhook.url: \(host) is refused by the daemon's network policy (\(rule))")
    }
}
