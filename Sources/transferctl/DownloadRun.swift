internal import Glibc

/// The life of downloads as `get` and `resume-from` run them: each task followed with a progress
/// display, tried again after a transient failure (`--retry`, from its resume data when the
/// daemon kept some), bounded in time (`--max-time`), then its file moved into place when the
/// daemon's copy is on this host and file system, else streamed (`GET /v1/tasks/{tid}/file`),
/// then the task deleted. Ctrl-C cancels the running task, producing resume data that is saved
/// next to the output, and cancels the ones not yet followed.
struct DownloadRun {
    let client: APIClient
    let options: DownloadOptions
    let json: Bool
    /// Transient failures tried again this many times (`--retry`).
    var retries = 0
    /// Seconds each download may take, its retries included (`--max-time`).
    var maxTime: Double?
    /// Give each saved file the server's Last-Modified (`-R`).
    var remoteTime = false
    /// The run's `-k` and `--proxy`, repeated in Ctrl-C's resume hint.
    var resumeOptions = ""

    /// One download, created (`resume-from`, or `get` with one URL); `again` makes its task
    /// anew for a retry that has no resume data.
    func run(_ created: APIResponse, output: String?, continuing: Int64? = nil, again: (() throws -> TaskInfo)? = nil) throws {
        let task = try created.decode(TaskInfo.self)
        if options.detach {
            if json { JSONOutput.print(created.body) } else { StandardStreams.out("\(task.id)\n") }
            return
        }
        Interrupt.install()
        try finish(task, output: output, position: nil, continuing: continuing, again: again)
    }

    /// Several downloads, created in order (`get` with several URLs or `-i`): all run in the
    /// daemon at once, within its caps; they are followed and saved one after the other. A failed
    /// one does not stop the others; the exit status says some failed.
    func run(_ created: APIResponse, tasks: [TaskInfo], outputs: [String?], continuing: [Int64?], again: [() throws -> TaskInfo]) throws {
        if options.detach {
            if json { JSONOutput.print(created.body) } else { StandardStreams.out(tasks.map { "\($0.id)\n" }.joined()) }
            return
        }
        Interrupt.install()
        var failed = 0
        for (index, task) in tasks.enumerated() {
            do {
                try finish(task, output: outputs[index], position: (index + 1, tasks.count), continuing: continuing[index], again: again[index])
            } catch let failure as CLIFailure where [.transferFailed, .timedOut, .localFile].contains(failure.status) {
                StandardStreams.err("transferctl: \(failure.message)\n")
                failed += 1
            } catch {
                // Interrupted, or the daemon is gone or refuses: the ones not reached yet go too.
                for rest in tasks[(index + 1)...] {
                    _ = try? client.send("POST", APIClient.path("v1", "tasks", String(rest.id), "cancel"), json: TaskCancelBody(produceResumeData: false))
                }
                throw error
            }
        }
        if failed > 0 { throw CLIFailure(.transferFailed, "\(failed) of \(tasks.count) downloads failed") }
    }

    /// Follows `task` to its end (tries again while allowed), then saves its file. `continuing`:
    /// the task asked for the rest of `output` from that offset (`-C -`).
    private func finish(_ task: TaskInfo, output: String?, position: (Int, Int)?, continuing: Int64?, again: (() throws -> TaskInfo)?) throws {
        var current = task
        var attempt = 0
        let deadline = maxTime.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        let name = output.flatMap { $0 == "-" || $0.hasSuffix("/") ? nil : Self.plainName($0) } ?? Self.fileName(fromURL: task.originalRequest.url)
        let label = position.map { "\(name) (\($0.0)/\($0.1))" } ?? name
        while true {
            let display = ProgressDisplay(label: label, direction: .download, silent: options.silent)
            var follower = TaskFollower(client: client, display: display)
            follower.deadline = deadline
            follower.atDeadline = { id in CLIFailure(.timedOut, "task \(id): not done within --max-time \(ByteFormat.oneDecimal(maxTime ?? 0)) s") }
            let snapshot: ProgressSnapshot
            do {
                snapshot = try follower.follow(current.id)
            } catch let failure as CLIFailure where failure.status == .interrupted {
                display.interrupt()
                throw cancel(current.id, resumeDataPath: resumeDataPath(current.id, name: name, output: output), output: output)
            } catch let failure as CLIFailure where failure.status == .timedOut {
                display.interrupt()
                _ = try? client.send("POST", APIClient.path("v1", "tasks", String(current.id), "cancel"), json: TaskCancelBody(produceResumeData: false))
                throw CLIFailure(.timedOut, "\(failure.message); cancelled")
            }
            let finished = try client.send("GET", APIClient.path("v1", "tasks", String(current.id)))
            let info = try finished.decode(TaskInfo.self)
            guard let error = snapshot.error ?? info.error else {
                try save(info, answer: finished, output: output, continuing: continuing)
                return
            }
            let status = info.response?.statusCode
            // 416 with the file's own size as the total: nothing is missing.
            if let continuing, let output, status == 416, info.response?.contentRange?.total == continuing {
                try settle(info, answer: finished, target: nil, report: "\(output) is complete already (\(ByteFormat.bytes(continuing)))")
                return
            }
            guard attempt < retries, Self.isTransient(error, status: status), error.resumeData != nil || again != nil else {
                if json { JSONOutput.print(finished.body) }
                let http = status.map { $0 >= 400 ? ", HTTP \($0)" : "" } ?? ""
                throw CLIFailure(.transferFailed, "task \(current.id) failed: \(error.name) (\(error.code)\(http)): \(error.message)")
            }
            attempt += 1
            let delay = min(60, 1 << (attempt - 1))
            if !options.silent {
                StandardStreams.err("task \(current.id) failed (\(error.name): \(error.message)); trying again in \(delay) s (\(attempt) of \(retries))\n")
            }
            try pause(seconds: delay, deadline: deadline, task: current.id)
            let next: TaskInfo
            if let resumeData = error.resumeData {
                next = try client.send("POST", APIClient.path("v1", "sessions", current.sessionId, "tasks"),
                                       json: TaskCreateBody(kind: "download", description: "transferctl get", resumeData: resumeData)).decode(TaskInfo.self)
            } else if let again {
                next = try again()
            } else {
                throw CLIFailure(.transferFailed, "task \(current.id) cannot be tried again")
            }
            if !options.keepTask { _ = try? client.send("DELETE", APIClient.path("v1", "tasks", String(current.id))) }
            current = next
        }
    }

    /// curl's transient failures (`--retry`): a timeout, a refused or dropped connection, no
    /// network, or HTTP 408, 429, 500, 502, 503 or 504.
    static func isTransient(_ error: TaskFailure, status: Int?) -> Bool {
        if let status, [408, 429, 500, 502, 503, 504].contains(status) { return true }
        return [-1001, -1004, -1005, -1009].contains(error.code)
    }

    /// Waits before a retry, still answering Ctrl-C and `--max-time`.
    private func pause(seconds: Int, deadline: ContinuousClock.Instant?, task: Int64) throws {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            if Interrupt.isRequested { throw CLIFailure(.interrupted, "interrupted while waiting to try task \(task) again") }
            if let deadline, ContinuousClock.now >= deadline {
                throw CLIFailure(.timedOut, "task \(task): not done within --max-time \(ByteFormat.oneDecimal(maxTime ?? 0)) s")
            }
            usleep(100_000)
        }
    }

    /// The finished file to its place: appended to the local file (`-C -` answered 206), moved
    /// when the daemon's copy is here, else fetched.
    private func save(_ info: TaskInfo, answer: APIResponse, output: String?, continuing: Int64?) throws {
        let target = Self.target(output, suggested: info.response?.suggestedFilename, url: info.originalRequest.url)
        if let continuing, info.response?.statusCode == 206 {
            try append(info, answer: answer, to: target, at: continuing)
            return
        }
        if continuing != nil && !options.silent {
            StandardStreams.err("the server sent all of \(target) (its copy is another version, or it cannot tell): replacing it\n")
        }
        var moved = false
        var size = info.progress.bytesReceived
        if !options.keepTask, target != "-", let location = info.location,
           LocalMove.into(target, from: location, size: info.progress.bytesReceived, sha256: info.digest?["sha-256"]) {
            moved = true
        } else {
            let file = try OutputFile(path: target)
            do {
                try client.send("GET", APIClient.path("v1", "tasks", String(info.id), "file"), sink: file, seconds: nil)
                try file.commit()
            } catch {
                file.discard()
                throw error
            }
            size = file.bytesWritten
        }
        let report = "saved \(target) (\(ByteFormat.bytes(size))\(moved ? "; moved from the daemon's folder, not copied" : ""))"
        try settle(info, answer: answer, target: target == "-" ? nil : target, report: target == "-" ? nil : report)
    }

    /// `-C -` answered 206: the daemon's file holds the rest, from `offset`; it is appended,
    /// checked against Content-Range (it must start at the local size and end at the total).
    private func append(_ info: TaskInfo, answer: APIResponse, to target: String, at offset: Int64) throws {
        guard let range = info.response?.contentRange, range.start == offset else {
            throw CLIFailure(.transferFailed, "task \(info.id): the server's range (\(info.response?.header("Content-Range") ?? "none")) does not start at \(target)'s size \(offset): nothing appended")
        }
        let file = try AppendingFile(path: target, offset: offset)
        do {
            try client.send("GET", APIClient.path("v1", "tasks", String(info.id), "file"), sink: file, seconds: nil)
            try file.commit(total: range.total)
        } catch {
            file.discard()
            throw error
        }
        try settle(info, answer: answer, target: target,
                   report: "saved \(target) (\(ByteFormat.bytes(file.bytesWritten)) appended to \(ByteFormat.bytes(offset)))")
    }

    /// The end of a download that went well: the saved `target` gets the server's time (`-R`),
    /// the task's JSON (`--json`) or `report` is printed, and the task is deleted (unless kept).
    private func settle(_ info: TaskInfo, answer: APIResponse, target: String?, report: String?) throws {
        if remoteTime, let target, let modified = info.response?.header("Last-Modified").flatMap(HTTPDateText.parse) {
            LocalFileState.setModified(target, seconds: modified)
        }
        if json { JSONOutput.print(answer.body) }
        else if let report, !options.silent { StandardStreams.err(report + "\n") }
        if !options.keepTask { try client.send("DELETE", APIClient.path("v1", "tasks", String(info.id))) }
    }

    /// Cancels the interrupted task with resume data and saves that data, if the daemon gave
    /// any; the failure to end with says how to continue, into the same file.
    private func cancel(_ taskID: Int64, resumeDataPath: String, output: String?) -> CLIFailure {
        Interrupt.acknowledge()
        do {
            let cancelled = try client.send("POST", APIClient.path("v1", "tasks", String(taskID), "cancel"),
                                            json: TaskCancelBody(produceResumeData: true)).decode(TaskInfo.self)
            guard let resumeData = cancelled.error?.resumeData else {
                return CLIFailure(.interrupted, "interrupted: task \(taskID) cancelled")
            }
            try TextFile.write(resumeData, to: resumeDataPath)
            let into = output.map { $0 == "-" ? " -o -" : " -o \(Self.shellQuoted($0))" } ?? ""
            return CLIFailure(.interrupted, "interrupted: task \(taskID) cancelled; continue it with: transferctl resume-from \(Self.shellQuoted(resumeDataPath))\(into)\(resumeOptions)")
        } catch let failure as CLIFailure {
            return CLIFailure(.interrupted, "interrupted; cancelling task \(taskID) failed: \(failure.message)")
        } catch {
            return CLIFailure(.interrupted, "interrupted; cancelling task \(taskID) failed: \(error)")
        }
    }

    private func resumeDataPath(_ taskID: Int64, name: String, output: String?) -> String {
        if let output, output != "-", !output.hasSuffix("/") { return output + ".resume" }
        if let output, output.hasSuffix("/") { return output + name + ".resume" }
        return output == nil ? name + ".resume" : "transferctl-\(taskID).resume"
    }

    /// A word as a shell reads it back: as it is when it is plain, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy {
            ($0.value >= 0x30 && $0.value <= 0x39) || ($0.value >= 0x41 && $0.value <= 0x5A) || ($0.value >= 0x61 && $0.value <= 0x7A) || "-_./+,:@%=".unicodeScalars.contains($0)
        }
        return plain ? word : "'" + word.replacing("'", with: "'\\''") + "'"
    }

    /// Where a download goes: `output` as given; a folder (`dir/`, from `-i`'s `dir=`) gets the
    /// suggested name; nil is the suggested name in the current folder.
    static func target(_ output: String?, suggested: String?, url: String) -> String {
        guard let output else { return fileName(suggested: suggested, url: url) }
        return output.hasSuffix("/") ? output + fileName(suggested: suggested, url: url) : output
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
