internal import Glibc

/// Follows one task to its end through the progress long-poll (`GET /v1/tasks/{tid}/progress?after=V&wait=S`),
/// showing each answer. Stops early, throwing exit 130, on Ctrl-C, and `atDeadline` at `deadline`.
struct TaskFollower {
    let client: APIClient
    let display: ProgressDisplay
    /// How long one poll may be held by the daemon when nothing changes.
    var waitSeconds = 10
    /// When to stop waiting (`wait --timeout`, `get --max-time`); nil: as long as it takes.
    var deadline: ContinuousClock.Instant?
    /// What ends the follow at `deadline`.
    var atDeadline: (Int64) -> CLIFailure = { CLIFailure(.refused, "task \($0) has not completed within --timeout") }

    /// The task's last snapshot, once it is `completed`.
    func follow(_ taskID: Int64) throws -> ProgressSnapshot {
        var after: Int64 = 0
        while true {
            if Interrupt.isRequested { throw CLIFailure(.interrupted, "interrupted") }
            let started = ContinuousClock.now
            var wait = String(waitSeconds)
            if let deadline {
                let left = deadline - started
                guard left > .zero else { throw atDeadline(taskID) }
                // Whole milliseconds, as the API's `wait` takes them: no poll outlasts the deadline.
                let milliseconds = min(Double(waitSeconds) * 1000, max(1, (left / .milliseconds(1)).rounded(.up)))
                wait = String(milliseconds / 1000)
            }
            let path = APIClient.path("v1", "tasks", String(taskID), "progress")
                + APIClient.query([("after", String(after)), ("wait", wait)])
            let snapshot = try client.send("GET", path, seconds: waitSeconds + 30).decode(ProgressSnapshot.self)
            if snapshot.state == "completed" {
                display.finish(snapshot)
                return snapshot
            }
            display.show(snapshot)
            after = snapshot.version
            // The version moves with every chunk: pace the polls rather than spin on them.
            let elapsed = ContinuousClock.now - started
            if elapsed < display.pollInterval {
                let rest = (display.pollInterval - elapsed).components
                usleep(useconds_t(rest.seconds * 1_000_000 + rest.attoseconds / 1_000_000_000_000))
            }
        }
    }
}
