internal import ArgumentParser
internal import BuildInfo
internal import Glibc

/// transferctl: the command-line client of transferd. It speaks only the daemon's public HTTP
/// API (openapi.yaml), never its libraries. `main` maps every way out to one exit status table.
@main
struct Transferctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transferctl",
        abstract: "The command-line client of transferd: transfers run by the daemon, followed from here.",
        discussion: """
            The daemon is --server (else $TRANSFERD_SERVER, else http://127.0.0.1:8080), the token --token (else $TRANSFERD_TOKEN). --json prints the daemon's JSON on stdout.

            \(ExitStatus.table)
            """,
        version: BuildInfo.description,
        subcommands: [
            GetCommand.self, PostCommand.self, PutCommand.self, ListCommand.self, ShowCommand.self,
            SuspendCommand.self, ResumeCommand.self, CancelCommand.self, ResumeFromCommand.self,
            SessionsCommand.self, EventsCommand.self, PriorityCommand.self,
            RemoveCommand.self, WaitCommand.self, LimitsCommand.self, StatsCommand.self,
        ])

    static func main() {
        Glibc.exit(run(Array(CommandLine.arguments.dropFirst())).rawValue)
    }

    /// Parses and runs one command line; returns the exit status (tests call it too).
    static func run(_ arguments: [String]) -> ExitStatus {
        do {
            var command = try parseAsRoot(GlobalOptions.movedAfterSubcommand(arguments))
            try command.run()
            return .success
        } catch let failure as CLIFailure {
            StandardStreams.err("transferctl: \(failure.message)\n")
            return failure.status
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                StandardStreams.out(fullMessage(for: error) + "\n")  // --help, --version
                return .success
            }
            StandardStreams.err(fullMessage(for: error) + "\n")
            return .usage
        }
    }
}
