/// The most one tenant (one token's owner; the anonymous user without tokens) may hold at once
/// (`--tenant-max-tasks`, `--tenant-max-disk`). Every tenant has the same quotas, admins too: an
/// admin's tasks fill the same disk and queue. Nil is unlimited. The largest single blob is
/// the daemon's `--max-blob-size`.
public struct TenantQuotas: Sendable, Equatable {
    /// Unfinished tasks (running, queued, waiting or suspended; not completed): past it a
    /// creation is refused with 429 `quota_exceeded`.
    public var maxTasks: Int?
    /// Bytes held in the data folder: blobs, and what tasks received (a download's file, a kept
    /// response body) while the task exists. A new blob that would pass it, or a new task while
    /// the tenant is at or past it, is refused with 507 `quota_exceeded`. A transfer already
    /// running is not cut off: the quota is checked when something is created.
    public var maxDiskBytes: Int?

    /// With tokens, a tenant's default: 100,000 unfinished tasks, disk unlimited. Without tokens
    /// the single user has no quota unless one is set (a machine of one's own, as before).
    public static let defaultMaxTasks = 100_000

    public init(maxTasks: Int? = nil, maxDiskBytes: Int? = nil) {
        self.maxTasks = maxTasks
        self.maxDiskBytes = maxDiskBytes
    }
}

/// Which quota refused an operation.
public enum QuotaExceeded: Sendable, Equatable {
    case tasks(limit: Int, held: Int, adding: Int)
    case disk(limit: Int, held: Int, adding: Int)

    public var message: String {
        switch self {
        case let .tasks(limit, held, adding):
            return "this token has \(held) unfinished tasks and may have at most \(limit); \(adding) more would pass it. Delete or finish tasks, then retry"
        case let .disk(limit, held, adding):
            let wanted = adding > 0 ? " and this adds \(adding)" : ""
            return "this token holds \(held) bytes in the daemon's data folder (blobs, downloaded files, kept bodies)\(wanted); its quota is \(limit). Delete tasks or blobs, then retry"
        }
    }
}
