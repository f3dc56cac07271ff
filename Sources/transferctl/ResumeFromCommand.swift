internal import ArgumentParser

/// `transferctl resume-from FILE`: a new download task from saved resume data (URLSession's
/// downloadTask(withResumeData:)), run like `get`.
struct ResumeFromCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume-from",
        abstract: "Continue a cancelled download from its resume data (saved by cancel --resume-data or Ctrl-C).")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The resume data file.", valueName: "FILE")) var resumeDataFile: String
    @OptionGroup var download: DownloadOptions
    @OptionGroup var sessionOptions: RunSessionOptions

    func validate() throws {
        try download.validate(json: connection.json)
        try sessionOptions.validate(session: download.session)
    }

    func run() throws {
        try download.checkOutputFolder()
        let resumeData = try TextFile.read(resumeDataFile).trimmingSpaces.filter { $0 != "\n" && $0 != "\r" }
        guard !resumeData.isEmpty else { throw CLIFailure(.localFile, "\(resumeDataFile) is empty") }
        let client = connection.client
        let session = try sessionOptions.session(download.session, client: client)
        defer { if session.own, !download.detach, !download.keepTask { SessionChoice.end(session.id, client: client) } }
        let body = TaskCreateBody(kind: "download", description: "transferctl resume-from", resumeData: resumeData)
        let created = try client.send("POST", APIClient.path("v1", "sessions", session.id, "tasks"), json: body)
        var run = DownloadRun(client: client, options: download, json: connection.json)
        run.resumeOptions = sessionOptions.again
        try run.run(created, output: download.output)
    }
}
