/// transferctl's exit statuses, one table for every subcommand (shown by `--help` and in
/// docs/cli.md), so scripts can tell a failed transfer from a daemon they cannot reach.
enum ExitStatus: Int32, Sendable, CaseIterable {
    case success = 0
    /// The transfer completed with an error (the task's `error`), or `--fail` met an HTTP error status.
    case transferFailed = 1
    /// Bad arguments (ArgumentParser's own usage errors are mapped here from its 64).
    case usage = 2
    /// No connection to the daemon (refused, unresolvable, timed out, dropped).
    case serverUnreachable = 3
    /// The daemon refused the token (401).
    case unauthorized = 4
    /// No such session, task or file (404).
    case notFound = 5
    /// The daemon refused the request otherwise (409, 422, 503, ...).
    case refused = 6
    /// A local file could not be read or written.
    case localFile = 7
    /// The daemon answered something transferctl cannot read.
    case badAnswer = 8
    /// `--max-time` passed (curl's 28): the task was cancelled.
    case timedOut = 28
    /// Ctrl-C (SIGINT): the running task was cancelled.
    case interrupted = 130

    /// The table as `--help` and docs/cli.md show it.
    static let table = """
        Exit status:
          0    success
          1    the transfer failed, or --fail saw an HTTP status >= 400
          2    usage error (bad arguments)
          3    cannot reach the daemon (--server)
          4    the daemon refused the token (--token)
          5    not found (no such session, task or file)
          6    the daemon refused the request (e.g. task already completed)
          7    a local file could not be read or written
          8    the daemon's answer could not be read
          28   --max-time passed (the task was cancelled)
          130  interrupted (Ctrl-C cancels the running task)
        """
}
