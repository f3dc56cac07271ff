/// URLSessionTask's four kinds. This version runs `data`; the others are issues 3 and 7.
public enum TaskKind: String, Codable, Sendable, CaseIterable {
    case data, upload, download, stream
}

/// URLSessionTask.State.
public enum TaskState: String, Codable, Sendable, CaseIterable {
    case suspended, running, canceling, completed
}

/// Where a task is in this service's pipeline, finer than `TaskState`: a running task is queued
/// until the scheduler admits it, then connecting, then transferring.
public enum TaskPhase: String, Codable, Sendable, CaseIterable {
    case queued, waiting, connecting, transferring, retrying, done
}
