/// Draws a task's progress on stderr while transferctl follows it: a bar redrawn in place with
/// `\r` when stderr is a terminal (width asked at every redraw), plain lines at most once a
/// second otherwise, nothing with `--silent`. Owned by the subcommand following one task.
final class ProgressDisplay {
    /// How progress is shown, decided once from `--silent` and whether stderr is a terminal.
    enum Mode: Equatable {
        case bar
        case lines
        case silent
    }

    /// Which counters the bar shows.
    enum Direction {
        case download
        case upload
    }

    let mode: Mode
    var label: String
    private let direction: Direction
    private var lastLine: ContinuousClock.Instant?
    /// When the display first showed the task: the finished line's average speed counts from it.
    private var started: ContinuousClock.Instant?
    private var drewBar = false

    init(label: String, direction: Direction, silent: Bool) {
        self.label = label
        self.direction = direction
        mode = silent ? .silent : (Terminal.stderrIsTerminal ? .bar : .lines)
    }

    /// How often the follower should ask for progress: a bar is worth ten redraws a second.
    var pollInterval: Duration { mode == .bar ? .milliseconds(100) : .milliseconds(250) }

    func line(for snapshot: ProgressSnapshot) -> ProgressLine {
        let figures = snapshot.progress
        let done = direction == .download ? figures.bytesReceived : figures.bytesSent
        let total = direction == .download ? figures.bytesExpectedToReceive : figures.bytesExpectedToSend
        let finished = snapshot.state == "completed"
        let failed = finished && snapshot.error != nil
        var speed = figures.bytesPerSecond
        // A completed task's current speed is 0: the last line shows the average instead.
        if finished, !failed, let started {
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if seconds >= 0.5 { speed = Double(done) / seconds }
        }
        return ProgressLine(label: label, done: done, total: total, bytesPerSecond: speed,
                            secondsRemaining: figures.secondsRemaining, finished: finished, failed: failed)
    }

    /// Shows `snapshot` (plain lines: only if a second passed since the last one).
    func show(_ snapshot: ProgressSnapshot) {
        let now = ContinuousClock.now
        if started == nil { started = now }
        switch mode {
        case .silent:
            return
        case .bar:
            StandardStreams.err("\r" + line(for: snapshot).bar(width: Terminal.columns) + "\u{1B}[K")
            drewBar = true
        case .lines:
            if let lastLine, now - lastLine < .seconds(1) { return }
            StandardStreams.err(line(for: snapshot).plain + "\n")
            lastLine = now
        }
    }

    /// The last state, always drawn, and the bar's line ended.
    func finish(_ snapshot: ProgressSnapshot) {
        lastLine = nil
        show(snapshot)
        if drewBar { StandardStreams.err("\n") }
        drewBar = false
    }

    /// Ends the bar's line so a message can follow on its own line.
    func interrupt() {
        if drewBar { StandardStreams.err("\n") }
        drewBar = false
    }
}
