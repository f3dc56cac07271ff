/// The life of an upload as `post` and `put` run it: the file goes to the daemon as a blob
/// (`POST /v1/blobs`, streamed), an upload task sends it (`{"blob": ID}`) with progress shown,
/// then the response's status goes to stderr and its body to stdout, and the task and blob are
/// deleted. Ctrl-C cancels the task.
struct UploadRun {
    static let discussion = """
        The response status is printed on stderr ("HTTP 200"), the response body on stdout; with --json, the task's JSON instead. An HTTP error status is a response like any other (exit 0) unless --fail is given.
        """

    let method: String
    let client: APIClient
    let options: UploadOptions
    let json: Bool

    func run() throws {
        let session = try SessionChoice.resolve(options.session, client: client)
        var blobID: String?
        let body: BodySpecBody
        if let path = options.file {
            let blob = try client.send("POST", "/v1/blobs", body: .file(try InputFile(path: path)), seconds: nil).decode(BlobInfo.self)
            blobID = blob.id
            body = .blob(blob.id)
        } else {
            body = .text(options.data ?? "")
        }
        defer { if let blobID { _ = try? client.send("DELETE", APIClient.path("v1", "blobs", blobID)) } }
        let spec = TaskCreateBody(
            kind: "upload",
            request: RequestSpecBody(url: options.url, method: method, headers: HeaderArgument.object(options.headers), body: body),
            priority: options.priority, description: "transferctl \(method.lowercased())",
            bandwidthLimit: options.limitRate.map { BandwidthLimitBody(uploadBytesPerSecond: $0.bytesPerSecond) })
        let task = try client.send("POST", APIClient.path("v1", "sessions", session, "tasks"), json: spec).decode(TaskInfo.self)
        Interrupt.install()
        let display = ProgressDisplay(label: "\(method) \(DownloadRun.fileName(fromURL: options.url))", direction: .upload, silent: options.silent)
        do {
            _ = try TaskFollower(client: client, display: display).follow(task.id)
        } catch let failure as CLIFailure where failure.status == .interrupted {
            display.interrupt()
            Interrupt.acknowledge()
            _ = try? client.send("POST", APIClient.path("v1", "tasks", String(task.id), "cancel"))
            throw CLIFailure(.interrupted, "interrupted: task \(task.id) cancelled")
        }
        let taskPath = APIClient.path("v1", "tasks", String(task.id))
        let finished = try client.send("GET", taskPath)
        let info = try finished.decode(TaskInfo.self)
        if json { JSONOutput.print(finished.body) }
        if let error = info.error {
            throw CLIFailure(.transferFailed, "task \(task.id) failed: \(error.name) (\(error.code)): \(error.message)")
        }
        let status = info.response?.statusCode ?? 0
        if !json {
            StandardStreams.err("HTTP \(status)\n")
            try printBody(taskPath)
        }
        if !options.keepTask { try client.send("DELETE", taskPath) }
        if options.fail && status >= 400 { throw CLIFailure(.transferFailed, "the server answered HTTP \(status)") }
    }

    /// The response body to stdout; a response without one (`409 no_body`) prints nothing.
    private func printBody(_ taskPath: String) throws {
        let stdout = try OutputFile(path: "-")
        do {
            try client.send("GET", taskPath + "/body", sink: stdout, seconds: nil)
        } catch let failure as CLIFailure where failure.status == .refused {
            return
        }
    }
}
