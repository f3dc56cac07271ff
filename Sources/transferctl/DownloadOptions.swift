internal import ArgumentParser
internal import Glibc

/// The options of the subcommands that run a download to a local file (`get`, `resume-from`).
struct DownloadOptions: ParsableArguments {
    @Option(name: [.short, .long], help: ArgumentHelp("Where to save the file; - for stdout. Default: the suggested filename (the URL's last path component).", valueName: "FILE"))
    var output: String?

    @Option(name: .long, help: ArgumentHelp("The session to create the task in. Default: transferctl's own session (created once, then reused).", valueName: "SID"))
    var session: String?

    @Flag(name: [.short, .long], help: "No progress on stderr.")
    var silent = false

    @Flag(name: .long, help: "Keep the completed task (and the daemon's copy of the file); by default it is deleted once the file is saved.")
    var keepTask = false

    @Flag(name: .long, help: "Create the task and return at once (prints its id, or its JSON with --json).")
    var detach = false

    func validate(json: Bool) throws {
        if json && output == "-" { throw ValidationError("--json and -o - both want stdout: choose one") }
        if detach && output != nil { throw ValidationError("--detach creates the task only: -o has nothing to save") }
    }

    /// Refuses an -o whose folder is missing or not writable before any task is made: found
    /// only once the download had finished, the daemon's work was wasted.
    func checkOutputFolder() throws {
        try Self.checkFolder(of: output)
    }

    /// The check for one output (`-o`, or an `-i` line's dir=/out=; `dir/` is the folder itself).
    static func checkFolder(of output: String?) throws {
        guard let output, output != "-" else { return }
        let folder = output.lastIndex(of: "/").map { output[..<$0].isEmpty ? "/" : String(output[..<$0]) } ?? "."
        guard access(folder, W_OK) == 0 else {
            throw CLIFailure(.localFile, "cannot write \(output): \(folder) \(errno == ENOENT ? "does not exist" : "is not writable")")
        }
    }
}
