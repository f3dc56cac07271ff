internal import ArgumentParser

/// `transferctl get URL [-o FILE]`: a download task run by the daemon, followed with a progress
/// bar, its file then saved locally.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download a URL through the daemon, showing its progress, and save the file.",
        discussion: """
            The daemon downloads (a download task in --session, else transferctl's own session); transferctl follows the task's progress (a bar on a terminal, a line a second otherwise, on stderr), then fetches the finished file and deletes the task (--keep-task keeps it).

            Ctrl-C cancels the task and saves its resume data as FILE.resume, for `transferctl resume-from FILE.resume`.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The URL to download (http or https).") var url: String
    @OptionGroup var download: DownloadOptions

    @Option(name: .customLong("limit-rate"), help: ArgumentHelp("The task's download rate limit, in bytes per second (K, M, G: powers of 1024).", valueName: "RATE"))
    var limitRate: RateArgument?

    @Option(help: ArgumentHelp("0.0 to 1.0, or low, default, high.", valueName: "PRIORITY"))
    var priority: PriorityArgument?

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A request header, \"Name: value\" (repeatable).", valueName: "HEADER"))
    var headers: [HeaderArgument] = []

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: ArgumentHelp("The User-Agent header.", valueName: "NAME"))
    var userAgent: String?

    @Option(name: [.customShort("u"), .customLong("user")], help: ArgumentHelp("The server's user and password, answering its Basic or Digest challenge. The daemon keeps them sealed with the task, never served.", valueName: "USER:PASSWORD"))
    var user: UserArgument?

    @Flag(name: [.customShort("O"), .customLong("remote-name")], help: "Save under the URL's file name (the default without -o; accepted as curl takes it).")
    var remoteName = false

    func validate() throws {
        try download.validate(json: connection.json)
        if remoteName && download.output != nil { throw ValidationError("-O and -o both name the file: choose one") }
        if user != nil && user?.applied(to: url) == nil { throw ValidationError("-u needs a URL with scheme://") }
    }

    /// The request: the URL with -u's login in it, the headers with -A's User-Agent.
    var request: RequestSpecBody {
        var all = headers
        if let userAgent { all.append(HeaderArgument(name: "User-Agent", value: userAgent)) }
        return RequestSpecBody(url: user.flatMap { $0.applied(to: url) } ?? url, headers: HeaderArgument.object(all))
    }

    func run() throws {
        try download.checkOutputFolder()
        let client = connection.client
        let session = try SessionChoice.resolve(download.session, client: client)
        let body = TaskCreateBody(
            kind: "download",
            request: request,
            priority: priority, description: "transferctl get",
            bandwidthLimit: limitRate.map { BandwidthLimitBody(downloadBytesPerSecond: $0.bytesPerSecond) })
        let created = try client.send("POST", APIClient.path("v1", "sessions", session, "tasks"), json: body)
        try DownloadRun(client: client, options: download, json: connection.json).run(created)
    }
}
