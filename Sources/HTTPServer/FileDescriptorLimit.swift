internal import Glibc

/// The process's open-file limit. Each held (suspended) connection keeps a socket open, so
/// the server raises the soft RLIMIT_NOFILE to the hard limit when it starts.
/// Process-wide state; only `HTTPServer.start()` changes it.
enum FileDescriptorLimit {
    /// Raises the soft limit to the hard limit; leaves it as it is if that fails.
    /// - SeeAlso: https://man7.org/linux/man-pages/man2/getrlimit.2.html
    static func raiseToHardLimit() {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(resource, &limit)
    }
}
