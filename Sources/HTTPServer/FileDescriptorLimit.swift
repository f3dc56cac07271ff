internal import Glibc

/// The process's open-file limit. Each held (suspended) connection keeps a socket open, so
/// the daemon raises the soft RLIMIT_NOFILE to the hard limit when it starts, and shares what
/// it then has between the API, the transfers and a reserve (`DescriptorBudget` in TransferAPI).
/// Process-wide state; changed only at start.
public enum FileDescriptorLimit {
    /// Raises the soft limit to the hard limit (leaves it as it is if that fails) and returns
    /// the soft limit now in force.
    /// - SeeAlso: https://man7.org/linux/man-pages/man2/getrlimit.2.html
    @discardableResult
    public static func raiseToHardLimit() -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is the largest rlim_t; no process gets near Int.max descriptors.
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }
}
