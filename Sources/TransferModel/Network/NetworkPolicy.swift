/// Where the daemon may connect for its tenants: a value with no I/O, judged on the resolved
/// address of every connection it makes for a task, a redirect hop, a retry, a stream task, an
/// FTP data connection or a webhook (`NetworkPolicy+Gate`), so a tenant cannot reach the
/// daemon's own host or private network (SSRF) by any spelling of an address or by a name.
///
/// An address is allowed when an `allow` range holds it (allow wins for its range), else
/// refused when a `deny` range or, with `deniesSpecialNetworks`, one of `specialNetworks`
/// holds it, else allowed. An IPv4-mapped IPv6 address (`::ffff:10.1.2.3`) is judged as the
/// IPv4 address its packets go to.
///
/// The daemon's policy is daemon-wide, the same for every tenant (`--deny-networks`,
/// `--allow-networks`; `forListener` says the default).
public struct NetworkPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Ranges refused besides the special ones (`--deny-networks`).
    public var deny: [NetworkRange] = []
    /// Ranges allowed whatever denies them (`--allow-networks`).
    public var allow: [NetworkRange] = []
    /// Whether `specialNetworks` are refused: by default, when the daemon listens on a
    /// non-loopback address (a service others reach, which must not be a way into its network).
    public var deniesSpecialNetworks = false

    public init(deny: [NetworkRange] = [], allow: [NetworkRange] = [], deniesSpecialNetworks: Bool = false) {
        self.deny = deny
        self.allow = allow
        self.deniesSpecialNetworks = deniesSpecialNetworks
    }

    /// Every connection allowed: a daemon on loopback only, without flags (a single-user machine).
    public static let allowAll = NetworkPolicy()

    /// The policy of a daemon listening on `listen`: the special networks refused unless it
    /// listens on loopback only, then the flags' ranges.
    public static func forListener(loopbackOnly: Bool, deny: [NetworkRange] = [], allow: [NetworkRange] = []) -> NetworkPolicy {
        NetworkPolicy(deny: deny, allow: allow, deniesSpecialNetworks: !loopbackOnly)
    }

    /// Whether nothing is ever refused (then no connection needs checking).
    package var allowsEverything: Bool { deny.isEmpty && !deniesSpecialNetworks }
    /// Why a webhook URL whose host is an IP address the policy refuses cannot be subscribed
    /// (nil: allowed, or a name, which is judged when it is connected to).
    package func refusal(forURLHost host: String) -> String? {
        IPAddress(host).flatMap { refusal(for: $0) }
    }


    /// The rule refusing a connection to `address`, in words for the error ("--deny-networks
    /// 127.0.0.2/32"), or nil when it is allowed.
    package func refusal(for address: IPAddress) -> String? {
        let address = address.unmapped
        if allow.contains(where: { $0.contains(address) }) { return nil }
        if let range = deny.first(where: { $0.contains(address) }) { return "--deny-networks \(range)" }
        if deniesSpecialNetworks, let range = Self.specialNetworks.first(where: { $0.contains(address) }) {
            return "\(range) is refused by default on a daemon listening beyond loopback; --allow-networks opens a range"
        }
        return nil
    }

    /// For the start-up log line: "allow all", or what is denied and allowed
    /// ("deny special ranges, 127.0.0.2/32; allow 10.1.0.0/16").
    public var description: String {
        guard !allowsEverything else { return "allow all" }
        let denied = (deniesSpecialNetworks ? ["special ranges"] : []) + deny.map(\.description)
        let allowed = allow.isEmpty ? "" : "; allow " + allow.map(\.description).joined(separator: ", ")
        return "deny " + denied.joined(separator: ", ") + allowed
    }

    /// Refused by default on a daemon that listens beyond loopback: the host itself, private
    /// and shared address space, link-local (where cloud metadata services answer:
    /// 169.254.169.254, fd00:ec2::254 is in fc00::/7), multicast and unspecified addresses
    /// (connecting to 0.0.0.0 or :: reaches the host itself). Their IPv4-mapped forms fall out
    /// of judging addresses unmapped.
    static let specialNetworks: [NetworkRange] = [
        "0.0.0.0/8",        // unspecified, "this network" (RFC 1122)
        "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",  // private (RFC 1918)
        "100.64.0.0/10",    // shared address space, carrier-grade NAT (RFC 6598)
        "127.0.0.0/8",      // loopback
        "169.254.0.0/16",   // link-local, cloud metadata (RFC 3927)
        "224.0.0.0/4",      // multicast
        "::/128",           // unspecified
        "::1/128",          // loopback
        "fe80::/10",        // link-local
        "fc00::/7",         // unique local (RFC 4193)
        "ff00::/8",         // multicast
    ].map { try! NetworkRange($0) }
}
