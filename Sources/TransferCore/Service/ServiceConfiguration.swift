/// How the transfer service is set up; the daemon fills it from flags and environment.
public struct ServiceConfiguration: Sendable {
    /// The folder holding the SQLite database (and, later, downloads).
    public var dataDirectory: String
    /// The most transfers running at once, over all sessions.
    public var maxConcurrentTransfers = 32
    /// A data task's body is held in memory, so it is bounded (URLSession has no bound; a service
    /// must). Larger responses fail with dataLengthExceedsMaximum.
    public var maxDataTaskBodySize = 64 << 20
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

    /// How long a completed task (its record, response body and, unless moved to a destination,
    /// its file) is kept, in seconds; nil keeps it until it is deleted.
    public var taskRetention: Double? = 7 * 86_400

    /// The daemon-wide rate limits at start (`--max-download-rate`, `--max-upload-rate`);
    /// PATCH /v1/limits changes them while running (not kept across a restart).
    public var bandwidthLimits = BandwidthLimits()

    /// The downloads root in effect.
    public var downloadsRoot: String { downloadsDirectory ?? dataDirectory + "/downloads" }

    public init(dataDirectory: String) { self.dataDirectory = dataDirectory }
}
