/// One moment of a transfer as transferctl shows it: a bar line for a terminal (percent, bar,
/// bytes, speed, ETA, fitted to the width) or a plain line for logs. Pure, so the layout is
/// tested without a terminal; `ProgressDisplay` decides when to draw which.
struct ProgressLine: Equatable {
    var label: String
    var done: Int64
    /// nil while the size is unknown (no Content-Length yet).
    var total: Int64?
    var bytesPerSecond: Double
    /// The daemon's estimate; nil: estimated here from the speed, if possible.
    var secondsRemaining: Double?
    /// The transfer is over: the ETA gives way to "done".
    var finished = false
    /// It ended with an error: "failed", and the bar stays where it stopped.
    var failed = false

    /// 0...100, nil when the total is unknown.
    var percent: Int? {
        guard let total, total > 0 else { return finished && !failed ? 100 : nil }
        return Int(min(max(done, 0), total) * 100 / total)
    }

    var eta: Double? {
        if let secondsRemaining { return secondsRemaining }
        guard let total, bytesPerSecond > 0 else { return nil }
        return Double(max(total - done, 0)) / bytesPerSecond
    }

    private var percentText: String {
        guard let percent else { return "  ?%" }
        let digits = "\(percent)%"
        return String(repeating: " ", count: max(0, 4 - digits.count)) + digits
    }

    private var bytesText: String {
        guard let total else { return ByteFormat.bytes(done) }
        return "\(ByteFormat.bytes(done)) / \(ByteFormat.bytes(total))"
    }

    private var etaText: String { failed ? "FAILED" : finished ? "done" : "ETA \(ByteFormat.clock(eta))" }

    /// The line for a terminal `width` columns wide, at most `width - 1` characters (writing the
    /// last column makes some terminals wrap). The bar takes what the figures leave; the label
    /// is shortened, then dropped, before the bar goes below 5 cells; narrower, the bar goes.
    func bar(width: Int) -> String {
        let usable = max(width - 1, 1)
        let figures = "\(bytesText)  \(ByteFormat.rate(bytesPerSecond))  \(etaText)"
        let minimumBar = 5
        // "LABEL  45% [BAR]  FIGURES": the label's room is what remains beyond the rest.
        let fixed = percentText.count + 3 + minimumBar + 2 + figures.count
        var name = label
        let labelRoom = usable - fixed - 1
        if labelRoom < 4 { name = "" }
        else if name.count > labelRoom { name = String(name.prefix(labelRoom - 1)) + "…" }
        let head = name.isEmpty ? percentText : "\(name) \(percentText)"
        let barCells = usable - head.count - 3 - 2 - figures.count
        guard barCells >= minimumBar else {
            return String("\(head)  \(figures)".prefix(usable))
        }
        return "\(head) [\(cells(barCells))]  \(figures)"
    }

    /// "=====>     ": the done share of `count` cells; all blank while the size is unknown.
    func cells(_ count: Int) -> String {
        guard let percent else { return String(repeating: " ", count: count) }
        let filled = count * percent / 100
        if filled >= count { return String(repeating: "=", count: count) }
        if filled == 0 { return String(repeating: " ", count: count) }
        return String(repeating: "=", count: filled - 1) + ">" + String(repeating: " ", count: count - filled)
    }

    /// "file.bin: 45% 45.0 MiB / 100.0 MiB, 10.2 MiB/s, ETA 0:05" for logs and pipes.
    var plain: String {
        let share = percent.map { "\($0)% " } ?? ""
        return "\(label): \(share)\(bytesText), \(ByteFormat.rate(bytesPerSecond)), \(etaText)"
    }
}
