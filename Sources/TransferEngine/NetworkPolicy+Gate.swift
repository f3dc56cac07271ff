package import Curl
package import TransferModel

extension NetworkPolicy {
    /// The gate every connection of the daemon's multi handles is put to (the engine's: tasks,
    /// redirects, retries, FTP data connections, stream tasks; the webhook thread's), judging
    /// the address curl is about to connect to. nil when nothing is ever refused: then no
    /// callback runs at all.
    package var connectionGate: ConnectionGate? {
        guard !allowsEverything else { return nil }
        let policy = self
        return ConnectionGate { peer in policy.refusal(for: IPAddress(bytes: peer.bytes)) }
    }
}

extension TaskError {
    /// The `reason` of a task the network policy stopped.
    package static let networkPolicyReason = "network_policy"

    /// A connection the network policy refused: cannotConnectToHost (-1004), as an unreachable
    /// host, but with its own `reason` and a message that names the rule.
    static func networkPolicy(_ refusal: ConnectionRefusal) -> TaskError {
        let address = IPAddress(bytes: refusal.peer.bytes)
        return TaskError(.cannotConnectToHost, "connecting to \(address) port \(refusal.peer.port) is refused by the daemon's network policy (\(refusal.rule))", reason: networkPolicyReason)
    }

    /// Never retried, never waited on: the policy will say the same next time.
    package var isNetworkPolicyRefusal: Bool { reason == Self.networkPolicyReason }
}

extension URLErrorMapping {
    /// The error of a transfer that failed to connect after the gate refused an address it was
    /// to connect to (`EasyHandle.connectionRefusal`); nil when the failure was another.
    /// CURLE_COULDNT_CONNECT is what curl reports once no address is left to try, for an FTP
    /// data connection too (measured with 7.88, ConnectionGateTests); another failure after a
    /// refused address (one of a name's addresses refused, another connected) is not the policy's.
    package static func policyError(_ code: CurlCode, _ handle: EasyHandle) -> TaskError? {
        guard code == .couldntConnect, let refusal = handle.connectionRefusal else { return nil }
        return .networkPolicy(refusal)
    }
}
