internal import ArgumentParser
internal import JSONModel

/// `transferctl get URL... [-i FILE] [-o FILE]`: download tasks run by the daemon, each followed
/// with a progress bar, their files then moved or saved locally.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URLs through the daemon, showing their progress, and save the files.",
        discussion: """
            The daemon downloads (download tasks in --session, else transferctl's own session); transferctl follows each task's progress (a bar on a terminal, a line a second otherwise, on stderr), then takes the finished file: moved into place when the daemon's copy is on this host and file system (checked against the task's SHA-256), else fetched; then it deletes the task (--keep-task keeps it, and then copies).

            Several URLs, or -i FILE (aria2's input file: one URL a line, tab-separated mirrors, indented out=, dir=, header=, checksum=, split=, user-agent=, referer=, max-download-limit=), are created at once and run side by side within the daemon's caps; they are saved one after the other, and a failed one does not stop the rest.

            Ctrl-C cancels the running task and saves its resume data as FILE.resume, for `transferctl resume-from FILE.resume -o FILE`.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The URLs to download (http, https, ftp, ...).") var urls: [String] = []
    @OptionGroup var download: DownloadOptions

    @Option(name: [.customShort("i"), .customLong("input-file")], help: ArgumentHelp("A list of URLs, one a line, in aria2's format (- for stdin).", valueName: "FILE"))
    var inputFile: String?

    @Option(name: .customLong("limit-rate"), help: ArgumentHelp("Each task's download rate limit, in bytes per second (K, M, G: powers of 1024).", valueName: "RATE"))
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

    @Option(name: [.customShort("x"), .customLong("segments")], help: ArgumentHelp("Connections for each file at once, 1 to 16 (aria2's -x): byte ranges fetched side by side.", valueName: "N"))
    var segments: Int?

    @Option(help: ArgumentHelp("The digest the file must have, ALGORITHM=HEX (md5, sha-1, sha-256, sha-384, sha-512); a mismatch fails the download.", valueName: "ALGO=HEX"))
    var checksum: String?

    @Option(help: ArgumentHelp("Try a download again this many times after a transient failure (a timeout, a refused or dropped connection, HTTP 408, 429, 500, 502, 503, 504), from where it stopped when the daemon kept resume data; waits 1, 2, 4 ... 60 s between.", valueName: "N"))
    var retry = 0

    @Option(name: .customLong("max-time"), help: ArgumentHelp("Seconds each download may take, retries included; then it is cancelled (exit 28).", valueName: "SECONDS"))
    var maxTime: Double?

    @OptionGroup var sessionOptions: RunSessionOptions

    @Option(name: [.customShort("C"), .customLong("continue-at")], help: ArgumentHelp("- : continue into the existing output file from its size (Range), only if the server's copy is the same version (If-Range with the file's time: a file saved with -R, curl -R or wget); else the whole file replaces it.", valueName: "-"))
    var continueAt: String?

    @Flag(name: [.customShort("R"), .customLong("remote-time")], help: "Give each saved file the server's Last-Modified time (curl's -R; -C - does it too); -C - then knows its version.")
    var remoteTime = false

    func validate() throws {
        try download.validate(json: connection.json)
        if urls.isEmpty && inputFile == nil { throw ValidationError("give a URL, or -i FILE") }
        if remoteName && download.output != nil { throw ValidationError("-O and -o both name the file: choose one") }
        for url in urls where user != nil && user?.applied(to: url) == nil { throw ValidationError("-u needs URLs with scheme://") }
        if let segments, !(1...16).contains(segments) { throw ValidationError("-x takes 1 to 16 connections") }
        if retry < 0 { throw ValidationError("--retry takes 0 or more") }
        if let maxTime, !(maxTime > 0) { throw ValidationError("--max-time takes a number of seconds above 0") }
        if let continueAt, continueAt != "-" { throw ValidationError("-C takes - (continue from the output file's size), not an offset") }
        if continueAt != nil && download.output == "-" { throw ValidationError("-C - continues a file: not stdout") }
        try sessionOptions.validate(session: download.session)
        if inputFile != nil || urls.count > 1 {
            if download.output != nil { throw ValidationError("-o names one file: with several URLs each takes its remote name (or out= in -i)") }
            if checksum != nil { throw ValidationError("--checksum is one file's: with several URLs, give checksum= per URL in -i") }
        }
    }

    /// The downloads: the URLs given, then those of -i.
    func items() throws -> [DownloadItem] {
        var items = urls.enumerated().map { DownloadItem(url: $0.element, output: download.output, origin: "URL \($0.offset + 1)") }
        if let inputFile {
            let text = inputFile == "-" ? try TextFile.readStandardInput() : try TextFile.read(inputFile)
            items += try URLList.parse(text, name: inputFile == "-" ? "stdin" : inputFile)
        }
        guard !items.isEmpty else { throw CLIFailure(.usage, "\(inputFile ?? "the input") lists no URL") }
        guard items.count <= 10_000 else { throw CLIFailure(.usage, "at most 10,000 URLs a run (the daemon's batch)") }
        return items
    }

    /// The task for `item`: the command's options, then the item's own.
    func spec(_ item: DownloadItem) -> TaskCreateBody {
        var all = headers
        if let userAgent { all.append(HeaderArgument(name: "User-Agent", value: userAgent)) }
        all += item.headers
        let url = user.flatMap { $0.applied(to: item.url) } ?? item.url
        let rate = item.rate ?? limitRate?.bytesPerSecond
        return TaskCreateBody(
            kind: "download",
            request: RequestSpecBody(url: url, headers: HeaderArgument.object(all)),
            priority: priority, description: "transferctl get",
            bandwidthLimit: rate.map { BandwidthLimitBody(downloadBytesPerSecond: $0) },
            checksum: item.checksum ?? checksum,
            segments: item.segments ?? segments,
            mirrors: item.mirrors.isEmpty ? nil : item.mirrors)
    }

    /// `-C -`: for each item whose output file exists and is not empty, the name pinned (the
    /// server's suggested name could differ) and the request asking for the rest of it, from
    /// the file's size, if the server's copy is the version of the file's time.
    func continuing(_ items: inout [DownloadItem]) -> [Int64?] {
        guard continueAt != nil else { return items.map { _ in nil } }
        return items.indices.map { index in
            let name = DownloadRun.fileName(fromURL: items[index].url)
            let target = items[index].output.map { $0.hasSuffix("/") ? $0 + name : $0 } ?? name
            items[index].output = target
            guard let local = LocalFileState.sizeAndTime(target), local.size > 0 else { return nil }
            items[index].headers += [HeaderArgument(name: "Range", value: "bytes=\(local.size)-"),
                                     HeaderArgument(name: "If-Range", value: HTTPDateText.format(local.modified))]
            return local.size
        }
    }

    func run() throws {
        var items = try items()
        let continuations = continuing(&items)
        for item in items { try DownloadOptions.checkFolder(of: item.output) }
        let client = connection.client
        let session = try sessionOptions.session(download.session, client: client)
        // A run's own session ends with it, unless its tasks are to outlive the run.
        defer { if session.own, !download.detach, !download.keepTask { SessionChoice.end(session.id, client: client) } }
        let specs = items.map(spec)
        let tasksPath = APIClient.path("v1", "sessions", session.id, "tasks")
        var run = DownloadRun(client: client, options: download, json: connection.json)
        run.resumeOptions = sessionOptions.again
        run.retries = retry
        run.maxTime = maxTime
        // -C - tells versions by the file's time: a file it saved carries the server's.
        run.remoteTime = remoteTime || continueAt != nil
        // Each task made anew, for a retry without resume data.
        let again = specs.map { spec in { try client.send("POST", tasksPath, json: spec).decode(TaskInfo.self) } }
        if specs.count == 1 && inputFile == nil {
            let created = try client.send("POST", tasksPath, json: specs[0])
            try run.run(created, output: items[0].output, continuing: continuations[0], again: again[0])
            return
        }
        let created = try client.send("POST", tasksPath + ":batch", json: TaskBatchBody(tasks: specs))
        let tasks = try created.decode(TaskBatchAnswer.self).tasks
        try run.run(created, tasks: tasks, outputs: items.map(\.output), continuing: continuations, again: again)
    }
}

/// The answer of `POST /v1/sessions/{sid}/tasks:batch`.
struct TaskBatchAnswer: Decodable {
    var tasks: [TaskInfo]
}
