internal import ArgumentParser

/// The options of `post` and `put`.
struct UploadOptions: ParsableArguments {
    @Argument(help: "The URL to send the body to.") var url: String

    @Option(name: [.short, .long], help: ArgumentHelp("The body, as text.", valueName: "TEXT"))
    var data: String?

    @Option(name: [.customShort("T"), .long], help: ArgumentHelp("The body, from a file (sent to the daemon first as a blob).", valueName: "PATH"))
    var file: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A request header, \"Name: value\" (repeatable).", valueName: "HEADER"))
    var headers: [HeaderArgument] = []

    @Option(name: .customLong("limit-rate"), help: ArgumentHelp("The task's upload rate limit, in bytes per second (K, M, G).", valueName: "RATE"))
    var limitRate: RateArgument?

    @Option(help: ArgumentHelp("0.0 to 1.0, or low, default, high.", valueName: "PRIORITY"))
    var priority: PriorityArgument?

    @Option(name: .long, help: ArgumentHelp("The session to create the task in. Default: transferctl's own session.", valueName: "SID"))
    var session: String?

    @Flag(name: [.short, .long], help: "No progress on stderr.")
    var silent = false

    @Flag(name: [.short, .long], help: "Exit with status 1 when the response status is 400 or more.")
    var fail = false

    @Flag(name: .long, help: "Keep the completed task; by default it (and the blob) is deleted once its response is printed.")
    var keepTask = false

    func validate() throws {
        if (data == nil) == (file == nil) { throw ValidationError("give the body with exactly one of --data and --file") }
    }
}

/// `transferctl post URL (--data TEXT | --file PATH)`.
struct PostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "post", abstract: "Send a body with POST through the daemon (an upload task); print the response.",
        discussion: UploadRun.discussion)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var upload: UploadOptions

    func run() throws { try UploadRun(method: "POST", client: connection.client, options: upload, json: connection.json).run() }
}

/// `transferctl put URL (--data TEXT | --file PATH)`.
struct PutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put", abstract: "Send a body with PUT through the daemon (an upload task); print the response.",
        discussion: UploadRun.discussion)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var upload: UploadOptions

    func run() throws { try UploadRun(method: "PUT", client: connection.client, options: upload, json: connection.json).run() }
}
