internal import ArgumentParser

/// `transferctl rm TID...`: deletes tasks (a running one is cancelled first by the daemon), each
/// with its record, body and the daemon's copy of its file.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete tasks (DELETE /v1/tasks/TID), each with its body and the daemon's copy of its file.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The tasks' ids.", valueName: "TID")) var taskIDs: [Int64]

    func validate() throws { if taskIDs.isEmpty { throw ValidationError("name at least one task") } }

    func run() throws {
        // Every task is tried; the first failure decides the exit status.
        var failure: CLIFailure?
        for id in taskIDs {
            do {
                _ = try connection.client.send("DELETE", APIClient.path("v1", "tasks", String(id)))
                if !connection.json { StandardStreams.out("task \(id): removed\n") }
            } catch let error as CLIFailure {
                StandardStreams.err("transferctl: task \(id): \(error.message)\n")
                failure = failure ?? error
            }
        }
        if let failure { throw CLIFailure(failure.status, "not every task was removed") }
    }
}

/// `transferctl wait TID...`: returns once every task has completed; exit status 1 if any failed.
struct WaitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait", abstract: "Wait until tasks complete; exit status 1 if any of them failed or was cancelled.",
        discussion: "Prints each task's outcome as it completes (its JSON with --json). --timeout gives up waiting (exit status 6) without touching the tasks.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The tasks' ids.", valueName: "TID")) var taskIDs: [Int64]

    @Option(name: .long, help: ArgumentHelp("Give up after this many seconds (default: wait as long as it takes).", valueName: "SECONDS"))
    var timeout: Double?

    func validate() throws {
        if taskIDs.isEmpty { throw ValidationError("name at least one task") }
        if let timeout, timeout <= 0 { throw ValidationError("--timeout must be positive") }
    }

    func run() throws {
        let client = connection.client
        // Followed as `get` follows its task, without drawing anything.
        var follower = TaskFollower(client: client, display: ProgressDisplay(label: "", direction: .download, silent: true), waitSeconds: 20)
        follower.deadline = timeout.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        var failed = false
        for id in taskIDs {
            _ = try follower.follow(id)
            let response = try client.send("GET", APIClient.path("v1", "tasks", String(id)))
            let task = try response.decode(TaskInfo.self)
            if task.error != nil { failed = true }
            TaskOutput.print(response, json: connection.json) { "task \($0.id): \(TaskText.state($0))" }
        }
        if failed { throw CLIFailure(.transferFailed, "not every task succeeded") }
    }
}

/// `transferctl limits [--download RATE] [--upload RATE]`: shows, or (an admin) changes, the
/// daemon-wide rate limits.
struct LimitsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "limits", abstract: "Show the daemon-wide rate limits, or change them (an admin token): GET/PATCH /v1/limits.",
        discussion: "RATE in bytes per second (K, M, G: powers of 1024), or 'unlimited'. A change is kept across the daemon's restarts.")

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .long, help: ArgumentHelp("The download limit over every transfer.", valueName: "RATE"))
    var download: LimitArgument?

    @Option(name: .long, help: ArgumentHelp("The upload limit over every transfer.", valueName: "RATE"))
    var upload: LimitArgument?

    func run() throws {
        let client = connection.client
        let response: APIResponse
        if download == nil && upload == nil {
            response = try client.send("GET", APIClient.path("v1", "limits"))
        } else {
            response = try client.send("PATCH", APIClient.path("v1", "limits"),
                                       json: LimitsPatchBody(downloadBytesPerSecond: download?.value, uploadBytesPerSecond: upload?.value))
        }
        if connection.json { return JSONOutput.print(response.body) }
        let limits = try response.decode(LimitsInfo.self)
        func text(_ rate: Int64?) -> String { rate.map { ByteFormat.rate(Double($0)) } ?? "unlimited" }
        StandardStreams.out("download \(text(limits.downloadBytesPerSecond)), upload \(text(limits.uploadBytesPerSecond))\n")
    }
}

/// `transferctl stats`: the daemon's load (GET /v1/stats).
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Show the daemon's transfers: running, queued, rates (GET /v1/stats, an admin token).")

    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let response = try connection.client.send("GET", APIClient.path("v1", "stats"))
        if connection.json { return JSONOutput.print(response.body) }
        let stats = try response.decode(StatsInfo.self)
        StandardStreams.out("running \(stats.running) of \(stats.maxConcurrentTransfers), queued \(stats.queued), waiting \(stats.waiting)\n")
    }
}

/// `--download`/`--upload` of `limits`: a rate, or `unlimited` (sent as null).
struct LimitArgument: ExpressibleByArgument, Equatable {
    var value: Int64?

    init?(argument: String) {
        if argument == "unlimited" {
            value = nil
        } else if let rate = ByteFormat.parseRate(argument), rate > 0 {
            value = rate
        } else {
            return nil
        }
    }
}

/// The body of PATCH /v1/limits: a direction left out stays; `null` makes it unlimited.
struct LimitsPatchBody: Encodable {
    var downloadBytesPerSecond: Int64??
    var uploadBytesPerSecond: Int64??

    enum CodingKeys: String, CodingKey { case downloadBytesPerSecond, uploadBytesPerSecond }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if let download = downloadBytesPerSecond { try c.encode(download, forKey: .downloadBytesPerSecond) }
        if let upload = uploadBytesPerSecond { try c.encode(upload, forKey: .uploadBytesPerSecond) }
    }
}

/// What `limits` shows of GET /v1/limits.
struct LimitsInfo: Decodable {
    var downloadBytesPerSecond: Int64?
    var uploadBytesPerSecond: Int64?
}

/// What `stats` shows of GET /v1/stats.
struct StatsInfo: Decodable {
    var maxConcurrentTransfers: Int
    var running: Int
    var queued: Int
    var waiting: Int
}
