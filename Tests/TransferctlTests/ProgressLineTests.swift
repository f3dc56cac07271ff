import Testing
@testable import transferctl

@Suite struct ProgressLineTests {
    let midway = ProgressLine(label: "100MiB.bin", done: 47_185_920, total: 104_857_600,
                              bytesPerSecond: 10_485_760, secondsRemaining: 5.5)

    @Test func barShowsPercentBytesSpeedAndETA() {
        let line = midway.bar(width: 120)
        #expect(line.hasPrefix("100MiB.bin  45% [="))
        #expect(line.contains(">"))
        #expect(line.hasSuffix("]  45.0 MiB / 100.0 MiB  10.0 MiB/s  ETA 0:06"))
        #expect(line.count == 119)
    }

    @Test(arguments: [20, 40, 60, 80, 120, 200])
    func barNeverFillsTheLastColumn(width: Int) {
        #expect(midway.bar(width: width).count <= width - 1)
        #expect(midway.bar(width: width).contains("45%"))
    }

    @Test func narrowTerminalsLoseTheLabelBeforeTheBar() {
        let line = midway.bar(width: 60)
        #expect(!line.contains("100MiB"))
        #expect(line.contains("["))
        let longName = ProgressLine(label: String(repeating: "n", count: 200), done: 1, total: 2, bytesPerSecond: 1, secondsRemaining: 1)
        let fitted = longName.bar(width: 100)
        #expect(fitted.count == 99)
        #expect(fitted.contains("…"))
    }

    @Test func cellsFillWithTheShareDone() {
        #expect(midway.cells(10) == "===>      ")
        var done = midway
        done.done = done.total!
        #expect(done.cells(10) == "==========")
        done.done = 0
        #expect(done.cells(10) == "          ")
    }

    @Test func unknownTotalHasNoPercentAndEstimatesNothing() {
        let line = ProgressLine(label: "stream", done: 2048, total: nil, bytesPerSecond: 1024, secondsRemaining: nil)
        #expect(line.percent == nil)
        #expect(line.bar(width: 80).contains("  ?%"))
        #expect(line.bar(width: 80).contains("ETA --:--"))
        #expect(line.plain == "stream: 2.0 KiB, 1.0 KiB/s, ETA --:--")
    }

    @Test func etaIsEstimatedFromTheSpeedWhenTheDaemonGivesNone() {
        let line = ProgressLine(label: "f", done: 0, total: 1000, bytesPerSecond: 100, secondsRemaining: nil)
        #expect(line.eta == 10)
    }

    @Test func finishedLinesSayDone() {
        var line = midway
        line.done = 104_857_600
        line.finished = true
        #expect(line.bar(width: 100).hasSuffix("100.0 MiB / 100.0 MiB  10.0 MiB/s  done"))
        #expect(line.plain == "100MiB.bin: 100% 100.0 MiB / 100.0 MiB, 10.0 MiB/s, done")
    }

    @Test func plainLine() {
        #expect(midway.plain == "100MiB.bin: 45% 45.0 MiB / 100.0 MiB, 10.0 MiB/s, ETA 0:06")
    }
}
