internal import FoundationEssentials
public import TransferModel
internal import TransferEngine
package import TransferStore
package import Logging

/// How the transfer service is set up; the daemon fills it from flags and environment.
public struct ServiceConfiguration: Sendable {
    /// The folder holding the SQLite database (and, later, downloads).
    public var dataDirectory: String
    /// Opens the store the service runs on; nil: the SQLite store in `dataDirectory`. The daemon
    /// sets it for `--database-url` (`PostgresStore`, which the service does not link).
    /// This daemon's id among the daemons sharing its store (`--node-id`); nil: HOSTNAME:PORT.
    public var nodeId: String?
    /// Seconds a node stays live without a heartbeat (it beats every third of this): `GET
    /// /v1/cluster` lists the nodes heard from within it.
    public var leaseTimeout = 15.0
    package var openStore: (@Sendable (_ instruments: any StoreInstruments, _ logger: Logger) throws -> any TaskStore)?
    /// The most transfers running at once, over all sessions: by default 8 per core, at least 16
    /// (transfers wait on the network far more than on the CPU).
    public var maxConcurrentTransfers = ServiceConfiguration.defaultConcurrentTransfers
    /// When tasks of isDiscretionary sessions may start (nil: any time, when nothing else waits).
    public var discretionaryWindow: DailyWindow?

    public static var defaultConcurrentTransfers: Int {
        max(16, 8 * ProcessInfo.processInfo.activeProcessorCount)
    }
    /// A data task's body is held in memory, so it is bounded (URLSession has no bound; a service
    /// must). Larger responses fail with dataLengthExceedsMaximum.
    public var maxDataTaskBodySize = 64 << 20
    /// How far a response's Content-Encoding may inflate its body before the task fails.
    public var decodedSizeLimit = DecodedSizeLimit()
    /// Events kept per session, in memory and in the store.
    public var eventRetention = 10_000
    /// How often running tasks' progress is written to the store, in seconds.
    public var checkpointInterval = 1.0
    /// The longest a long-poll is held, in seconds.
    public var maxLongPollWait = 60.0
    /// The root under which download tasks may name a `destination`; default `<data>/downloads`.
    public var downloadsDirectory: String?

    /// The root under which `file` request bodies may be read; nil: file bodies are refused.
    public var uploadsDirectory: String?

    /// The folders `file:` URLs may read from (`--file-url-roots`); empty: file: URL tasks fail
    /// with unsupportedURL.
    public var fileURLRoots: [String] = []

    /// The OpenSSH known_hosts file an sftp: server's host key must be in (`--ssh-known-hosts`);
    /// nil: `~/.ssh/known_hosts` of the daemon's user. A server whose key is missing from it or
    /// differs is refused (serverCertificateUntrusted); host keys are never checked loosely.
    public var sshKnownHostsFile: String?

    /// `sshKnownHostsFile`, or the daemon user's own known_hosts ($HOME/.ssh/known_hosts).
    var resolvedSSHKnownHostsFile: String { sshKnownHostsFile ?? Self.homeKnownHostsFile }

    /// Read once: `ProcessInfo.environment` copies the whole environment into a dictionary on
    /// every call, and every task's start asks (3% of a small download's CPU).
    private static let homeKnownHostsFile: String = {
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/nonexistent"
        return home + "/.ssh/known_hosts"
    }()

    /// How long a completed task (its record, response body and, unless moved to a destination,
    /// its file) is kept, in seconds; nil keeps it until it is deleted.
    public var taskRetention: Double? = 7 * 86_400

    /// Background sessions' retries of transient failures: the wait before retry n is drawn
    /// from [d/2, d], d = min(cap, base · 2ⁿ) seconds.
    public var retryBackoff = Backoff(base: 1, cap: 300)

    /// How often a task waiting for connectivity tries to connect again, the same way.
    public var connectivityBackoff = Backoff(base: 1, cap: 30)
    /// The daemon-wide rate limits at start (`--max-download-rate`, `--max-upload-rate`);
    /// PATCH /v1/limits changes them while running (not kept across a restart).
    public var bandwidthLimits = BandwidthLimits()

    /// How long a background session's attachment stays live without an events poll carrying
    /// it, in seconds: a little above the longest long-poll wait, so a client that polls
    /// back to back never lapses (`--attachment-lease`).
    public var attachmentLease = 75.0
    /// How webhooks retry and time out (`WebhookPolicy`).
    public var webhookPolicy = WebhookPolicy()
    /// URLCache.shared (default sessions): bytes of response bodies kept in memory (4 MiB), and
    /// on disk under `<data>/cache` (64 MiB; 0 keeps nothing on disk). Ephemeral sessions' private
    /// caches take the memory figure unless their configuration gives one.
    public var urlCacheMemoryCapacity = 4 << 20
    public var urlCacheDiskCapacity = 64 << 20

    /// Where tasks, stream tasks and webhooks may connect (`--deny-networks`,
    /// `--allow-networks`); the daemon sets it from its listen address and flags
    /// (`NetworkPolicy.forListener`).
    public var networkPolicy = NetworkPolicy.allowAll

    /// The most one tenant may hold at once (`--tenant-max-tasks`, `--tenant-max-disk`).
    public var tenantQuotas = TenantQuotas()

    /// The downloads root in effect.
    public var downloadsRoot: String { downloadsDirectory ?? dataDirectory + "/downloads" }

    public init(dataDirectory: String) { self.dataDirectory = dataDirectory }
}
