/// Why the service refused an operation. The API layer renders each as an HTTP status and a
/// stable error code.
public enum ServiceError: Error, Sendable, Equatable {
    /// No such session or task, or not visible to this client: 404.
    case notFound(String)
    /// Not possible in the current state: 409 with `code`.
    case conflict(code: String, message: String)
    /// A bad cursor or filter: 400.
    case invalidQuery(String)
    /// The daemon is stopping: 503.
    case shuttingDown
    /// The daemon's disk refused a write (full, I/O error): 507.
    case storage(String)
    /// A background session another client is attached to (URLError -996): 409.
    case backgroundSessionInUse(String)
    /// A tenant's quota (`TenantQuotas`): 429 for tasks, 507 for bytes, code `quota_exceeded`.
    case quotaExceeded(QuotaExceeded)
}
