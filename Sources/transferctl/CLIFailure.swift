/// An error that ends transferctl: the message printed on stderr and the exit status. Thrown by
/// every layer (API client, files, subcommands) and turned into the process's exit by `Transferctl.main`.
struct CLIFailure: Error, Sendable, Equatable {
    let status: ExitStatus
    let message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}
