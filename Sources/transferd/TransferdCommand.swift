import ArgumentParser
internal import BuildInfo
import FoundationEssentials
import Logging
import TransferAPI
internal import TransferModel
internal import TransferService
internal import ClusterStore
import UnixSignals

/// `transferd`: parses flags (each also read from a TRANSFERD_* environment variable), builds
/// the daemon and runs it until SIGTERM or SIGINT. Started by `TransferdMain`.
struct TransferdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transferd",
        abstract: "URLSession as a service: sessions and transfer tasks over a REST/JSON API.",
        discussion: "Every option can also be set with the environment variable named in its help; a flag wins over the variable.",
        version: BuildInfo.description)

    @Option(help: "Address to listen on, HOST:PORT or [V6]:PORT. Env TRANSFERD_LISTEN. Default 127.0.0.1:8080.")
    var listen: String?

    @Option(name: .customLong("data-dir"), help: "Folder for the database and files. Env TRANSFERD_DATA_DIR. Default ./data.")
    var dataDir: String?

    @Option(name: .customLong("database-url"), help: "Keep the state in PostgreSQL instead of SQLite under DATA-DIR: postgresql://USER[:PASSWORD]@HOST:PORT/DB or a libpq connection string (the files stay under DATA-DIR). Env TRANSFERD_DATABASE_URL.")
    var databaseURL: String?

    @Option(name: .customLong("node-id"), help: "This daemon's id among those sharing its --database-url (GET /v1/cluster). Env TRANSFERD_NODE_ID. Default HOSTNAME:PORT.")
    var nodeId: String?

    @Option(name: .customLong("lease-timeout"), help: "Seconds a daemon sharing the database stays live without a heartbeat (it beats every third of it), 3-600. Env TRANSFERD_LEASE_TIMEOUT. Default 15.")
    var leaseTimeout: Int?

    @Option(name: .customLong("downloads-dir"), help: "Root folder for download destinations. Env TRANSFERD_DOWNLOADS_DIR. Default DATA-DIR/downloads.")
    var downloadsDir: String?

    @Option(name: .customLong("uploads-dir"), help: "Root folder that {\"file\": PATH} request bodies are read from; unset, file bodies are refused. Env TRANSFERD_UPLOADS_DIR.")
    var uploadsDir: String?

    @Option(name: .customLong("file-url-roots"), help: "Folders that file: URL tasks may read (comma-separated, symlinks resolved); unset, file: URLs fail with unsupportedURL. Env TRANSFERD_FILE_URL_ROOTS.")
    var fileURLRoots: String?

    @Option(name: .customLong("ssh-known-hosts"), help: "The OpenSSH known_hosts file sftp: servers' host keys must be in; unset, ~/.ssh/known_hosts of the daemon's user. Env TRANSFERD_SSH_KNOWN_HOSTS.")
    var sshKnownHosts: String?

    @Option(name: .customLong("token"), help: "A bearer token clients must send (repeatable): NAME:SECRET:ROLE (ROLE admin or tenant), NAME:SECRET (a tenant) or SECRET (an admin when it is the only token, else a tenant). Env TRANSFERD_TOKENS, comma-separated.")
    var tokens: [String] = []

    @Option(name: .customLong("token-file"), help: "A file of tokens, one NAME:SECRET[:ROLE] a line (# comments, blank lines); refused when every user may read it. Env TRANSFERD_TOKENS_FILE.")
    var tokenFile: String?

    @Flag(name: .customLong("allow-unauthenticated"), help: "Allow a non-loopback address without tokens. Env TRANSFERD_ALLOW_UNAUTHENTICATED=1.")
    var allowUnauthenticated = false

    @Option(name: .customLong("deny-networks"), help: "Address ranges tasks, stream tasks and webhooks may not connect to, CIDR,... (repeatable), besides the default: on a non-loopback --listen the host, private, link-local (cloud metadata), CGNAT, ULA, multicast and unspecified ranges. Env TRANSFERD_DENY_NETWORKS.")
    var denyNetworks: [String] = []

    @Option(name: .customLong("allow-networks"), help: "Address ranges allowed whatever denies them, CIDR,... (repeatable); 0.0.0.0/0,::/0 allows everything. Env TRANSFERD_ALLOW_NETWORKS.")
    var allowNetworks: [String] = []

    @Option(name: .customLong("max-transfers"), help: "Most transfers running at once. Env TRANSFERD_MAX_TRANSFERS. Default 8 per core, at least 16.")
    var maxTransfers: Int?

    @Option(name: .customLong("discretionary-window"), help: "When tasks of isDiscretionary sessions may start, HH:MM-HH:MM in UTC (may wrap past midnight). Env TRANSFERD_DISCRETIONARY_WINDOW. Default any time.")
    var discretionaryWindow: String?

    @Option(name: .customLong("max-body-size"), help: "Largest data task response body kept, in bytes. Env TRANSFERD_MAX_BODY_SIZE. Default 67108864.")
    var maxBodySize: Int?

    @Option(name: .customLong("max-decompression-ratio"), help: "How many times its encoded size a response's Content-Encoding may inflate a body (past 32 MiB decoded) before the task fails with dataLengthExceedsMaximum. Env TRANSFERD_MAX_DECOMPRESSION_RATIO. Default 200.")
    var maxDecompressionRatio: Int?

    @Option(name: .customLong("max-request-size"), help: "Largest API request body, in bytes. Env TRANSFERD_MAX_REQUEST_SIZE. Default 16777216.")
    var maxRequestSize: Int?

    @Option(name: .customLong("max-blob-size"), help: "Largest blob (POST /v1/blobs), in bytes. Env TRANSFERD_MAX_BLOB_SIZE. Default 4294967296.")
    var maxBlobSize: Int?

    @Option(name: .customLong("tenant-max-tasks"), help: "Most unfinished tasks one token may have (429 quota_exceeded past it); 0: unlimited. Env TRANSFERD_TENANT_MAX_TASKS. Default 100000 with tokens, unlimited without.")
    var tenantMaxTasks: Int?

    @Option(name: .customLong("tenant-max-disk"), help: "Most bytes one token may hold in the data folder: blobs, downloaded files, kept bodies (507 quota_exceeded past it); 0: unlimited. Env TRANSFERD_TENANT_MAX_DISK. Default unlimited.")
    var tenantMaxDisk: Int?

    @Option(name: .customLong("task-retention"), help: "Seconds a completed task (record, body, file in the data folder) is kept; 0 keeps it until deleted. Env TRANSFERD_TASK_RETENTION. Default 604800 (7 days).")
    var taskRetention: Int?

    @Option(name: .customLong("retry-backoff"), help: "Background sessions' retry backoff, BASE:CAP in seconds (waits grow from BASE, doubling, up to CAP, with jitter). Env TRANSFERD_RETRY_BACKOFF. Default 1:300.")
    var retryBackoff: String?

    @Option(name: .customLong("connectivity-backoff"), help: "How often a task waiting for connectivity tries again, BASE:CAP in seconds. Env TRANSFERD_CONNECTIVITY_BACKOFF. Default 1:30.")
    var connectivityBackoff: String?
    @Option(name: .customLong("max-download-rate"), help: "Global download limit in bytes per second, over all transfers (PATCH /v1/limits changes it). Env TRANSFERD_MAX_DOWNLOAD_RATE. Default unlimited.")
    var maxDownloadRate: Int?

    @Option(name: .customLong("max-upload-rate"), help: "Global upload limit in bytes per second, over all transfers (PATCH /v1/limits changes it). Env TRANSFERD_MAX_UPLOAD_RATE. Default unlimited.")
    var maxUploadRate: Int?

    @Option(name: .customLong("attachment-lease"), help: "Seconds a background session's attachment stays live without an events poll carrying it. Env TRANSFERD_ATTACHMENT_LEASE. Default 75.")
    var attachmentLease: Int?

    @Option(name: .customLong("webhook-retry"), help: "Webhook retry backoff, BASE:CAP in seconds. Env TRANSFERD_WEBHOOK_RETRY. Default 1:300.")
    var webhookRetry: String?

    @Option(name: .customLong("webhook-attempts"), help: "Tries per webhook delivery before its events are skipped. Env TRANSFERD_WEBHOOK_ATTEMPTS. Default 8.")
    var webhookAttempts: Int?
    @Option(name: .customLong("url-cache-memory"), help: "URLCache.shared's memory capacity in bytes (default sessions; ephemeral sessions' default too). Env TRANSFERD_URL_CACHE_MEMORY. Default 4194304.")
    var urlCacheMemory: Int?

    @Option(name: .customLong("url-cache-disk"), help: "URLCache.shared's disk capacity in bytes, under DATA-DIR/cache (0: nothing on disk). Env TRANSFERD_URL_CACHE_DISK. Default 67108864.")
    var urlCacheDisk: Int?

    @Option(name: .customLong("http-threads"), help: "HTTP server threads. Env TRANSFERD_HTTP_THREADS. Default 4.")
    var httpThreads: Int?

    @Option(name: .customLong("max-connections"), help: "Most API connections open at once, held long-polls included; lowered to fit the descriptor limit (half of it, less a reserve of 64). Env TRANSFERD_MAX_CONNECTIONS. Default 10000.")
    var maxConnections: Int?

    @Option(name: .customLong("max-connections-per-client"), help: "Most API connections one client address may hold; 0: no cap (behind a reverse proxy). Env TRANSFERD_MAX_CONNECTIONS_PER_CLIENT. Default a quarter of --max-connections.")
    var maxConnectionsPerClient: Int?

    @Option(name: .customLong("idle-connection-timeout"), help: "Seconds an API connection may sit idle before it is closed (held long-polls are not idle). Env TRANSFERD_IDLE_CONNECTION_TIMEOUT. Default 60.")
    var idleConnectionTimeout: Int?

    @Option(name: .customLong("config"), help: "A configuration file: one JSON object whose keys are these flags' long names (\"max-transfers\": 64, \"token\": [\"ops:SECRET:admin\"]). Flags win over the environment, the environment over the file. Env TRANSFERD_CONFIG. Every TRANSFERD_X variable may also be read from a file named by TRANSFERD_X_FILE.")
    var config: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical. Env TRANSFERD_LOG_LEVEL. Default info.")
    var logLevel: String?

    func run() async throws {
        let environment = try SettingSources.environment(ProcessInfo.processInfo.environment, configFile: config)
        let levelText = logLevel ?? environment["TRANSFERD_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw ValidationError("--log-level/TRANSFERD_LOG_LEVEL must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \(levelText)")
        }
        // One logfmt line per event on standard error (docs/operations.md, "Metrics, health and logs").
        LoggingSystem.bootstrap { label in LogfmtLogHandler(label: label, level: level, sink: .standardError) }
        let logger = Logger(label: "transferd")
        let configuration = try resolve(environment)
        let daemon = try TransferDaemon(configuration: configuration, logger: logger)
        // Trapped before the start, so a signal that comes while it starts is not lost (nor
        // fatal); the first one stops the daemon in order, and the trap stays until it stopped,
        // so a second one meanwhile changes nothing.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        try daemon.start()
        for await signal in signals {
            logger.info("stopping", metadata: ["signal": "\(signal)"])
            break
        }
        withExtendedLifetime(signals) { daemon.stop() }
    }

    /// Flags first, then the environment (with the configuration file's values under it,
    /// `SettingSources`), then defaults.
    func resolve(_ environment: [String: String]) throws -> DaemonConfiguration {
        var configuration = DaemonConfiguration(dataDirectory: dataDir ?? environment["TRANSFERD_DATA_DIR"] ?? "./data")
        if let value = try integer(leaseTimeout, environment, "TRANSFERD_LEASE_TIMEOUT", 3...600) { configuration.service.leaseTimeout = Double(value) }
        if let url = databaseURL ?? environment["TRANSFERD_DATABASE_URL"], !url.isEmpty {
            // A node frozen inside a transaction must not hold its row locks much past its
            // lease: the others could not take its tasks over. (Not below 5 s: a big batch's
            // rows are gathered between the writer's statements.)
            let idle = max(5, configuration.service.leaseTimeout / 3)
            configuration.service.openStore = { instruments, logger in
                try PostgresStore(url: url, instruments: instruments, logger: logger, transactionIdleTimeout: idle)
            }
        }
        if let id = nodeId ?? environment["TRANSFERD_NODE_ID"] {
            guard !id.isEmpty, id.count <= 200, id.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
                throw ValidationError("--node-id/TRANSFERD_NODE_ID must be 1-200 printable ASCII characters without spaces, got \(id)")
            }
            configuration.service.nodeId = id
        }
        configuration.service.downloadsDirectory = downloadsDir ?? environment["TRANSFERD_DOWNLOADS_DIR"]
        configuration.service.uploadsDirectory = uploadsDir ?? environment["TRANSFERD_UPLOADS_DIR"]
        configuration.service.fileURLRoots = try Self.fileURLRoots(fileURLRoots ?? environment["TRANSFERD_FILE_URL_ROOTS"])
        configuration.service.sshKnownHostsFile = sshKnownHosts ?? environment["TRANSFERD_SSH_KNOWN_HOSTS"]
        let listenText = listen ?? environment["TRANSFERD_LISTEN"] ?? "127.0.0.1:8080"
        guard let address = ListenAddress(listenText) else {
            throw ValidationError("--listen must be HOST:PORT or [V6]:PORT, got \(listenText)")
        }
        configuration.listen = address
        configuration.tokens = tokens.isEmpty
            ? (environment["TRANSFERD_TOKENS"] ?? "").split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }
            : tokens
        configuration.denyNetworks = try Self.networkRanges(denyNetworks, environment, flag: "--deny-networks", variable: "TRANSFERD_DENY_NETWORKS")
        configuration.allowNetworks = try Self.networkRanges(allowNetworks, environment, flag: "--allow-networks", variable: "TRANSFERD_ALLOW_NETWORKS")
        configuration.tokenFile = tokenFile ?? environment["TRANSFERD_TOKENS_FILE"]
        configuration.allowUnauthenticated = allowUnauthenticated || ["1", "true", "yes"].contains(environment["TRANSFERD_ALLOW_UNAUTHENTICATED"]?.lowercased() ?? "")
        if let value = try integer(maxTransfers, environment, "TRANSFERD_MAX_TRANSFERS", 1...100_000) { configuration.service.maxConcurrentTransfers = value }
        if let text = discretionaryWindow ?? environment["TRANSFERD_DISCRETIONARY_WINDOW"] {
            guard let window = DailyWindow(text) else {
                throw ValidationError("--discretionary-window must be HH:MM-HH:MM (UTC), got \(text)")
            }
            configuration.service.discretionaryWindow = window
        }
        if let value = try integer(maxBodySize, environment, "TRANSFERD_MAX_BODY_SIZE", 0...(1 << 40)) { configuration.service.maxDataTaskBodySize = value }
        if let value = try integer(maxDecompressionRatio, environment, "TRANSFERD_MAX_DECOMPRESSION_RATIO", 1...1_000_000) { configuration.service.decodedSizeLimit.ratio = value }
        if let value = try integer(maxRequestSize, environment, "TRANSFERD_MAX_REQUEST_SIZE", 1024...(1 << 34)) { configuration.maxRequestBodySize = value }
        if let value = try integer(maxBlobSize, environment, "TRANSFERD_MAX_BLOB_SIZE", 0...(1 << 50)) { configuration.maxBlobSize = value }
        configuration.tenantMaxTasks = try integer(tenantMaxTasks, environment, "TRANSFERD_TENANT_MAX_TASKS", 0...100_000_000)
        configuration.tenantMaxDiskBytes = try integer(tenantMaxDisk, environment, "TRANSFERD_TENANT_MAX_DISK", 0...(1 << 60))
        if let value = try integer(taskRetention, environment, "TRANSFERD_TASK_RETENTION", 0...(100 * 365 * 86_400)) {
            configuration.service.taskRetention = value == 0 ? nil : Double(value)
        }
        if let value = try backoff(retryBackoff, environment, "TRANSFERD_RETRY_BACKOFF") { configuration.service.retryBackoff = value }
        if let value = try backoff(connectivityBackoff, environment, "TRANSFERD_CONNECTIVITY_BACKOFF") { configuration.service.connectivityBackoff = value }
        let rates = 1...BandwidthLimit.maxRate
        configuration.service.bandwidthLimits.downloadBytesPerSecond = try integer(maxDownloadRate, environment, "TRANSFERD_MAX_DOWNLOAD_RATE", rates)
        configuration.service.bandwidthLimits.uploadBytesPerSecond = try integer(maxUploadRate, environment, "TRANSFERD_MAX_UPLOAD_RATE", rates)
        if let value = try integer(urlCacheMemory, environment, "TRANSFERD_URL_CACHE_MEMORY", 0...(1 << 40)) { configuration.service.urlCacheMemoryCapacity = value }
        if let value = try integer(urlCacheDisk, environment, "TRANSFERD_URL_CACHE_DISK", 0...(1 << 40)) { configuration.service.urlCacheDiskCapacity = value }
        if let value = try integer(httpThreads, environment, "TRANSFERD_HTTP_THREADS", 1...256) { configuration.httpThreads = value }
        if let value = try integer(maxConnections, environment, "TRANSFERD_MAX_CONNECTIONS", 1...1_000_000) { configuration.maxConnections = value }
        configuration.maxConnectionsPerClient = try integer(maxConnectionsPerClient, environment, "TRANSFERD_MAX_CONNECTIONS_PER_CLIENT", 0...1_000_000)
        if let value = try integer(idleConnectionTimeout, environment, "TRANSFERD_IDLE_CONNECTION_TIMEOUT", 1...86_400) { configuration.idleConnectionTimeout = value }
        if let value = try integer(attachmentLease, environment, "TRANSFERD_ATTACHMENT_LEASE", 1...86_400) { configuration.service.attachmentLease = Double(value) }
        if let value = try backoff(webhookRetry, environment, "TRANSFERD_WEBHOOK_RETRY") { configuration.service.webhookPolicy.backoff = value }
        if let value = try integer(webhookAttempts, environment, "TRANSFERD_WEBHOOK_ATTEMPTS", 1...100) { configuration.service.webhookPolicy.maxAttempts = value }
        return configuration
    }

    /// BASE:CAP seconds, 0 < BASE <= CAP <= one day.
    private func backoff(_ flag: String?, _ environment: [String: String], _ name: String) throws -> Backoff? {
        guard let text = flag ?? environment[name] else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Double($0.filter { $0 != " " }) }
        guard parts.count == 2, let base = parts[0], let cap = parts[1], base > 0, base <= cap, cap <= 86_400 else {
            throw ValidationError("\(name) must be BASE:CAP in seconds with 0 < BASE <= CAP <= 86400, got \(text)")
        }
        return Backoff(base: base, cap: cap)
    }

    private func integer(_ flag: Int?, _ environment: [String: String], _ name: String, _ range: ClosedRange<Int>) throws -> Int? {
        guard let value = flag ?? environment[name].flatMap({ Int($0) }) else {
            if let text = environment[name] { throw ValidationError("\(name) must be an integer, got \(text)") }
            return nil
        }
        guard range.contains(value) else { throw ValidationError("\(name) must be within \(range.lowerBound)...\(range.upperBound)") }
        return value
    }
}
