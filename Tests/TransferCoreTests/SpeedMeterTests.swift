import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `SpeedMeter`: bytes per second over a sliding window.
@Suite struct SpeedMeterTests {
    @Test func noSpeedUntilTimePasses() {
        var meter = SpeedMeter()
        #expect(meter.bytesPerSecond == 0)
        meter.record(total: 500, at: 10)
        #expect(meter.bytesPerSecond == 0)
        meter.record(total: 900, at: 10)  // same instant: no division by zero
        #expect(meter.bytesPerSecond == 0)
    }

    @Test func steadyRate() {
        var meter = SpeedMeter()
        for second in 0...4 { meter.record(total: second * 2_000, at: Double(second)) }
        #expect(meter.bytesPerSecond == 2_000)
    }

    @Test func windowForgetsOldSamples() {
        // 100 B/s for five seconds, then 1000 B/s: after the window slides, only the new rate shows.
        var meter = SpeedMeter(window: 5)
        var total = 0
        for second in 0...12 {
            if second > 0 { total += second <= 5 ? 100 : 1_000 }
            meter.record(total: total, at: Double(second))
        }
        #expect(meter.bytesPerSecond == 1_000)
    }

    @Test func partlySlidWindowAverages() {
        var meter = SpeedMeter(window: 5)
        meter.record(total: 0, at: 0)
        meter.record(total: 100, at: 1)
        meter.record(total: 1_100, at: 2)
        // (1100 - 0) / 2 s: nothing is older than the window yet.
        #expect(meter.bytesPerSecond == 550)
    }

    @Test func twoSamplesAreKeptEvenWhenFarApart() {
        var meter = SpeedMeter(window: 5)
        meter.record(total: 0, at: 0)
        meter.record(total: 1_000, at: 100)
        #expect(meter.bytesPerSecond == 10)
    }

    @Test func resetStartsAfresh() {
        var meter = SpeedMeter()
        meter.record(total: 0, at: 0)
        meter.record(total: 10_000, at: 1)
        #expect(meter.bytesPerSecond == 10_000)
        meter.reset()
        #expect(meter.bytesPerSecond == 0)
        meter.record(total: 10_000, at: 50)
        meter.record(total: 10_300, at: 51)
        #expect(meter.bytesPerSecond == 300)
    }
}
