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

    func validate() throws { try download.validate(json: connection.json) }

    func run() throws {
        try download.checkOutputFolder()
        let resumeData = try TextFile.read(resumeDataFile).trimmingSpaces.filter { $0 != "\n" && $0 != "\r" }
        guard !resumeData.isEmpty else { throw CLIFailure(.localFile, "\(resumeDataFile) is empty") }
        let client = connection.client
        let session = try SessionChoice.resolve(download.session, client: client)
        let body = TaskCreateBody(kind: "download", description: "transferctl resume-from", resumeData: resumeData)
        let created = try client.send("POST", APIClient.path("v1", "sessions", session, "tasks"), json: body)
        try DownloadRun(client: client, options: download, json: connection.json).run(created, output: download.output)
    }
}
