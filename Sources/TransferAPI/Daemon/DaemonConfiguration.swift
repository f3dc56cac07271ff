public import TransferModel
public import TransferService

/// Everything the daemon is started with (flags and environment, resolved by the executable).
public struct DaemonConfiguration: Sendable {
    public var listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080)
    public var service: ServiceConfiguration
    /// `--token` entries: `NAME:SECRET:ROLE`, `NAME:SECRET` (a tenant) or a bare `SECRET`
    /// (see `TokenConfiguration` for its role).
    public var tokens: [String] = []
    /// `--token-file`: one `NAME:SECRET[:ROLE]` a line, read at start (`TokenFile`).
    public var tokenFile: String?
    /// Serving a non-loopback address without tokens must be asked for explicitly.
    public var allowUnauthenticated = false
    public var maxRequestBodySize = 16 << 20
    /// The largest blob (`POST /v1/blobs`, streamed to disk), in bytes; larger ones are 413.
    public var maxBlobSize = 4 << 30
    public var httpThreads = 4
    /// The most API connections open at once, held long-polls included (`--max-connections`);
    /// lowered to what the descriptor limit allows (`DescriptorBudget`).
    public var maxConnections = 10_000
    /// The most API connections one client address may hold (`--max-connections-per-client`);
    /// nil: a quarter of `maxConnections` as the budget allows it; 0: no cap (behind a proxy
    /// every client has the proxy's address).
    public var maxConnectionsPerClient: Int? = nil
    /// Seconds an API connection may sit idle (not a held long-poll) before it is closed.
    public var idleConnectionTimeout = 60
    /// `--deny-networks` and `--allow-networks`: ranges refused and allowed besides the
    /// default, which follows `listen` (`networkPolicy`).
    public var denyNetworks: [NetworkRange] = []
    public var allowNetworks: [NetworkRange] = []

    /// `--tenant-max-tasks`: unfinished tasks per tenant. Nil takes the default,
    /// `TenantQuotas.defaultMaxTasks` with tokens and none without; 0 is unlimited.
    public var tenantMaxTasks: Int?
    /// `--tenant-max-disk`: bytes per tenant in the data folder; nil or 0 is unlimited.
    public var tenantMaxDiskBytes: Int?

    /// The quotas in effect, given whether tokens are configured.
    func tenantQuotas(withTokens: Bool) -> TenantQuotas {
        let tasks = tenantMaxTasks ?? (withTokens ? TenantQuotas.defaultMaxTasks : 0)
        return TenantQuotas(maxTasks: tasks == 0 ? nil : tasks, maxDiskBytes: tenantMaxDiskBytes == 0 ? nil : tenantMaxDiskBytes)
    }

    public init(dataDirectory: String) { service = ServiceConfiguration(dataDirectory: dataDirectory) }

    /// Every configured token, from `tokens` and `tokenFile`, and a warning about the file to log.
    public func accessTokens() throws(TokenConfigurationError) -> (tokens: [AccessToken], warning: String?) {
        let file = try tokenFile.map { path throws(TokenConfigurationError) in try TokenFile.read(path) }
        let tokens = try TokenConfiguration.tokens(entries: tokens, fileText: file?.text, filePath: tokenFile ?? "")
        return (tokens, file?.warning)
    }

    /// Where tasks and webhooks may connect: beyond loopback the daemon is a service others
    /// reach, so its host and private networks are refused by default; on loopback only
    /// (a single-user machine) everything is allowed unless the flags say otherwise.
    public var networkPolicy: NetworkPolicy {
        .forListener(loopbackOnly: listen.isLoopback, deny: denyNetworks, allow: allowNetworks)
    }

    /// Why this configuration must not start, or nil.
    public var refusal: String? {
        if tokens.isEmpty && tokenFile == nil && !listen.isLoopback && !allowUnauthenticated {
            return "refusing to serve \(listen) without a token: set --token/TRANSFERD_TOKENS or --token-file/TRANSFERD_TOKENS_FILE, or --allow-unauthenticated/TRANSFERD_ALLOW_UNAUTHENTICATED=1 if the network is trusted"
        }
        return nil
    }
}

/// A host and port to listen on: "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:80".
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses "host:port" or "[v6]:port"; nil when malformed.
    public init?(_ text: String) {
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else { return nil }
        self.init(host: String(host), port: port)
    }

    public var isLoopback: Bool { host == "localhost" || host == "::1" || host.hasPrefix("127.") }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
