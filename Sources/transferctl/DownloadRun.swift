/// The life of a download as `get` and `resume-from` run it: follow the task with a progress
/// display, then stream its file (`GET /v1/tasks/{tid}/file`) to the output, then delete the
/// task. Ctrl-C cancels the task, producing resume data that is saved next to the output.
struct DownloadRun {
    let client: APIClient
    let options: DownloadOptions
    let json: Bool

    /// Runs `task` (just created) to its end, or returns at once with `--detach`.
    func run(_ created: APIResponse) throws {
        let task = try created.decode(TaskInfo.self)
        if options.detach {
            if json { JSONOutput.print(created.body) } else { StandardStreams.out("\(task.id)\n") }
            return
        }
        Interrupt.install()
        let label = options.output.flatMap { $0 == "-" ? nil : Self.plainName($0) } ?? Self.fileName(fromURL: task.originalRequest.url)
        let display = ProgressDisplay(label: label, direction: .download, silent: options.silent)
        let snapshot: ProgressSnapshot
        do {
            snapshot = try TaskFollower(client: client, display: display).follow(task.id)
        } catch let failure as CLIFailure where failure.status == .interrupted {
            display.interrupt()
            throw cancel(task.id, resumeDataPath: resumeDataPath(task.id, label: label))
        }
        let finished = try client.send("GET", APIClient.path("v1", "tasks", String(task.id)))
        let info = try finished.decode(TaskInfo.self)
        if let error = snapshot.error ?? info.error {
            if json { JSONOutput.print(finished.body) }
            throw CLIFailure(.transferFailed, "task \(task.id) failed: \(error.name) (\(error.code)): \(error.message)")
        }
        let target = options.output ?? Self.fileName(suggested: info.response?.suggestedFilename, url: info.originalRequest.url)
        let file = try OutputFile(path: target)
        do {
            try client.send("GET", APIClient.path("v1", "tasks", String(task.id), "file"), sink: file, seconds: nil)
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
        if json { JSONOutput.print(finished.body) }
        else if !file.isStandardOutput && !options.silent { StandardStreams.err("saved \(target) (\(ByteFormat.bytes(file.bytesWritten)))\n") }
        if !options.keepTask { try client.send("DELETE", APIClient.path("v1", "tasks", String(task.id))) }
    }

    /// Cancels the interrupted task with resume data and saves that data, if the daemon gave
    /// any; the failure to end with says how to continue.
    private func cancel(_ taskID: Int64, resumeDataPath: String) -> CLIFailure {
        Interrupt.acknowledge()
        do {
            let cancelled = try client.send("POST", APIClient.path("v1", "tasks", String(taskID), "cancel"),
                                            json: TaskCancelBody(produceResumeData: true)).decode(TaskInfo.self)
            guard let resumeData = cancelled.error?.resumeData else {
                return CLIFailure(.interrupted, "interrupted: task \(taskID) cancelled")
            }
            try TextFile.write(resumeData, to: resumeDataPath)
            return CLIFailure(.interrupted, "interrupted: task \(taskID) cancelled; continue it with: transferctl resume-from \(resumeDataPath)")
        } catch let failure as CLIFailure {
            return CLIFailure(.interrupted, "interrupted; cancelling task \(taskID) failed: \(failure.message)")
        } catch {
            return CLIFailure(.interrupted, "interrupted; cancelling task \(taskID) failed: \(error)")
        }
    }

    private func resumeDataPath(_ taskID: Int64, label: String) -> String {
        if let output = options.output, output != "-" { return output + ".resume" }
        return options.output == nil ? label + ".resume" : "transferctl-\(taskID).resume"
    }

    /// The default output name: the daemon's suggested filename (Content-Disposition, else the
    /// URL's last path component), reduced to a plain name in the current folder.
    static func fileName(suggested: String?, url: String) -> String {
        if let suggested, let name = plainName(suggested), name != "Unknown" { return name }
        return fileName(fromURL: url)
    }

    static func fileName(fromURL url: String) -> String {
        var path = Substring(url)
        if let scheme = path.firstRange(of: "://") { path = path[scheme.upperBound...] }
        path = path.prefix(while: { $0 != "?" && $0 != "#" })
        guard let slash = path.firstIndex(of: "/") else { return "index.html" }
        let last = path[slash...].split(separator: "/").last.map(String.init) ?? ""
        return plainName(last) ?? "index.html"
    }

    /// The last component of `name`, nil when that is empty, `.` or `..`.
    static func plainName(_ name: String) -> String? {
        let last = name.split(separator: "/").last.map(String.init) ?? ""
        guard !last.isEmpty, last != ".", last != ".." else { return nil }
        return last
    }
}
