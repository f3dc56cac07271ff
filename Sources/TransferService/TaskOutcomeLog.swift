internal import FoundationEssentials
public import Logging
internal import TransferModel

/// One log line per step of a task's life an operator asks about: created, started, retried,
/// and its outcome (completed, failed with its URLError code, cancelled), with the task, its
/// session, kind and host, bytes and durations as plain numbers (seconds). At info: a daemon run
/// at --log-level notice or above builds none of them (the benchmarks run at warning). A step
/// seen under the service's lock hands a copy of the task to `Deliveries`, and its line is built
/// and written after the lock: the fields' strings are not made while every request waits.
/// Never the URL's path,
/// query or credentials, nor an error's message (which may quote them): the host only.
extension TransferService {
    /// Whether the task lines are written; checked before one is built.
    var logsTaskSteps: Bool { logger.logLevel <= .info }

    /// After a creation: a line per task, or one for a batch (its first and last id), so a
    /// batch of 10,000 is one line.
    func logCreated(_ tasks: [TransferTask], session: String) {
        guard logsTaskSteps, let first = tasks.first, let last = tasks.last else { return }
        if tasks.count == 1 {
            logger.info("task created", metadata: Self.taskFields(first))
        } else {
            logger.info("tasks created", metadata: [
                "transfer.session.id": "\(session)", "transfer.tasks": "\(tasks.count)",
                "transfer.task.first": "\(first.id)", "transfer.task.last": "\(last.id)",
            ])
        }
    }

    /// The scheduler admitted the task and its transfer begins; `waited` is its time queued.
    func logStarted(_ task: TransferTask, waited: Duration?, _ deliveries: inout Deliveries) {
        guard logsTaskSteps else { return }
        deliveries.add { [logger] in
            var fields = Self.taskFields(task)
            fields["transfer.attempt"] = "\(task.retryCount + 1)"
            if let waited { fields["transfer.queued"] = "\(Self.seconds(waited.seconds))" }
            logger.info("task started", metadata: fields)
        }
    }

    /// An attempt failed and is tried again after `delay` seconds.
    func logRetry(_ task: TransferTask, delay: Double, reason: String, _ deliveries: inout Deliveries) {
        guard logsTaskSteps else { return }
        deliveries.add { [logger] in
            var fields = Self.taskFields(task)
            fields["transfer.attempt"] = "\(task.retryCount + 2)"  // the one to come; the first is 1
            fields["retry.delay"] = "\(delay)"
            fields["retry.reason"] = "\(reason)"
            logger.info("task retried", metadata: fields)
        }
    }

    /// The task completed: succeeded, failed (its code and name) or cancelled.
    func logCompleted(_ task: TransferTask, _ deliveries: inout Deliveries) {
        guard logsTaskSteps else { return }
        deliveries.add { [logger] in logger.info("\(Self.outcome(of: task))", metadata: Self.completedFields(task)) }
    }

    /// The outcome line's message.
    private static func outcome(of task: TransferTask) -> String {
        switch task.error?.code {
        case nil: "task completed"
        case URLErrorCode.cancelled.rawValue: "task cancelled"
        default: "task failed"
        }
    }

    /// The outcome line's fields.
    private static func completedFields(_ task: TransferTask) -> Logger.Metadata {
        var fields = Self.taskFields(task)
        fields["transfer.bytes_received"] = "\(task.progress.bytesReceived)"
        fields["transfer.bytes_sent"] = "\(task.progress.bytesSent)"
        let end = task.completedAt ?? Date()
        fields["transfer.duration"] = "\(Self.seconds(end.timeIntervalSince(task.createdAt)))"
        if let started = task.startedAt { fields["transfer.run_duration"] = "\(Self.seconds(end.timeIntervalSince(started)))" }
        let cancelled = task.error?.code == URLErrorCode.cancelled.rawValue
        if !cancelled, let status = task.response?.statusCode { fields["http.status"] = "\(status)" }
        if let error = task.error, !cancelled {
            // The code, name and reason, not the message: a message may quote the URL (an
            // unsupported scheme's does), and a URL's query may hold a secret. The API serves it.
            fields["error.code"] = "\(error.code)"
            fields["error.name"] = "\(error.name)"
            if let reason = error.reason { fields["error.reason"] = "\(reason)" }
        }
        return fields
    }

    /// What every task line carries.
    private static func taskFields(_ task: TransferTask) -> Logger.Metadata {
        var fields: Logger.Metadata = [
            "transfer.task.id": "\(task.id)", "transfer.session.id": "\(task.sessionId)", "transfer.kind": "\(task.kind.rawValue)",
        ]
        if let host = host(of: task.originalRequest.url) { fields["url.host"] = "\(host)" }
        return fields
    }

    /// The host (and port) of a URL, without its user info; nil for one without "://".
    static func host(of url: String) -> Substring? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        let rest = url[url.index(colon, offsetBy: 3)...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        return host.isEmpty ? nil : host
    }

    /// Seconds as a number with millisecond precision ("0.412").
    private static func seconds(_ interval: Double) -> String {
        String((max(0, interval) * 1000).rounded() / 1000)
    }
}
