internal import TransferModel

/// Which sessions and tasks an operation writes, so the writes of a creation the store could not
/// commit can be withdrawn before they ever are (`Store.withdraw`), and a name for log lines
/// (an operation's content never goes into a log).
extension StoreOperation {
    /// This operation without what it writes for session `session` or tasks `tasks`; nil when
    /// nothing is left.
    package func without(session: String?, tasks: Set<Int>) -> StoreOperation? {
        func drops(session id: String, task: Int?) -> Bool {
            id == session || task.map(tasks.contains) == true
        }
        switch self {
        case .saveSession(let saved):
            return saved.id == session ? nil : self
        case .saveTask(let task, _, _, _):
            return drops(session: task.sessionId, task: task.id) ? nil : self
        case .saveTasks(let rows):
            let kept = rows.filter { !drops(session: $0.task.sessionId, task: $0.task.id) }
            return kept.isEmpty ? nil : .saveTasks(kept)
        case .saveBody(let id, _), .saveMetrics(let id, _), .deleteTask(let id), .reserveTaskId(let id):
            return tasks.contains(id) ? nil : self
        case .appendEvent(let event):
            return drops(session: event.sessionId, task: event.taskId) ? nil : self
        case .pruneEvents(let id, _), .deleteEvents(let id, _), .saveWebhookSecret(let id, _):
            return id == session ? nil : self
        case .cookies, .reserveFeedSeqs, .saveSetting:
            return self
        }
    }

    /// The operation's kind, for log lines.
    var name: String {
        switch self {
        case .saveSession: "saveSession"
        case .saveTask: "saveTask"
        case .saveTasks: "saveTasks"
        case .reserveFeedSeqs: "reserveFeedSeqs"
        case .saveBody: "saveBody"
        case .saveMetrics: "saveMetrics"
        case .appendEvent: "appendEvent"
        case .pruneEvents: "pruneEvents"
        case .deleteEvents: "deleteEvents"
        case .saveWebhookSecret: "saveWebhookSecret"
        case .deleteTask: "deleteTask"
        case .reserveTaskId: "reserveTaskId"
        case .saveSetting: "saveSetting"
        case .cookies: "cookies"
        }
    }
}
