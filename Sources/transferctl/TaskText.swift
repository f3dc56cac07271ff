/// Tasks and sessions as text for people (`ls`, `show`, `sessions`); `--json` bypasses it.
enum TaskText {
    /// The header of `ls`'s table.
    static let tableHeader = "ID      SESSION                              KIND      STATE       PHASE         PROGRESS  URL"

    /// One row of `ls`.
    static func row(_ task: TaskInfo) -> String {
        let progress = progressShare(task).map { "\($0)%" } ?? "-"
        return [pad(String(task.id), 7), pad(task.sessionId, 36), pad(task.kind, 9), pad(state(task), 11),
                pad(task.phase, 13), pad(progress, 9), task.originalRequest.url].joined(separator: " ")
    }

    /// `completed` becomes `cancelled` or `failed` when the task has an error, so a listing shows it.
    static func state(_ task: TaskInfo) -> String {
        guard task.state == "completed", let error = task.error else { return task.state }
        return error.name == "cancelled" ? "cancelled" : "failed"
    }

    static func progressShare(_ task: TaskInfo) -> Int? {
        task.progress.fractionCompleted.map { Int(($0 * 100).rounded(.down)) }
    }

    /// `show`: one field a line.
    static func details(_ task: TaskInfo) -> String {
        let figures = task.progress
        var lines = [
            "task:      \(task.id) (\(task.kind)) in session \(task.sessionId)",
            "state:     \(state(task)) (\(task.phase))",
            "request:   \(task.originalRequest.method) \(task.originalRequest.url)",
            "priority:  \(task.priority)",
        ]
        if let description = task.description { lines.append("about:     \(description)") }
        var received = "received:  \(ByteFormat.bytes(figures.bytesReceived))"
        if let total = figures.bytesExpectedToReceive { received += " of \(ByteFormat.bytes(total))" }
        if let share = progressShare(task) { received += " (\(share)%)" }
        lines.append(received)
        if figures.bytesSent > 0 || figures.bytesExpectedToSend != nil {
            var sent = "sent:      \(ByteFormat.bytes(figures.bytesSent))"
            if let total = figures.bytesExpectedToSend { sent += " of \(ByteFormat.bytes(total))" }
            lines.append(sent)
        }
        if task.state == "running" { lines.append("speed:     \(ByteFormat.rate(figures.bytesPerSecond)), ETA \(ByteFormat.clock(figures.secondsRemaining))") }
        if let response = task.response {
            lines.append("response:  \(response.statusCode)" + (response.mimeType.map { " \($0)" } ?? ""))
        }
        if let error = task.error {
            lines.append("error:     \(error.name) (\(error.code)): \(error.message)")
            if error.resumeData != nil { lines.append("resumable: yes (the resume data is error.resumeData in --json)") }
        }
        if let location = task.location { lines.append("file:      \(location)") }
        return lines.joined(separator: "\n")
    }

    static func sessionRow(_ session: SessionInfo) -> String {
        [pad(session.id, 36), pad(session.kind, 10), pad(session.state, 12), pad(session.createdAt, 25),
         session.description ?? session.identifier ?? ""].joined(separator: " ")
    }

    static let sessionHeader = "ID                                   KIND       STATE        CREATED                   DESCRIPTION"

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
