import Testing
@testable import TransferModel
@testable import TransferEngine

/// A segmented download's connections draw on one bucket for their task's `bandwidthLimit`
/// (`TransferThrottle.share`), without I/O (a fake clock): what one leaves, another may take,
/// and together they stay within the one limit.
struct SharedTaskLimitTests {
    private let limit = BandwidthLimit(downloadBytesPerSecond: 1000)

    @Test func connectionsOfOneTaskDrawOnOneBucket() {
        let governor = BandwidthGovernor()
        var primary = TransferThrottle(limit: limit, background: false, now: 0)
        var worker = TransferThrottle(limit: limit, background: false, now: 0)
        worker.share(&primary)
        // The burst (a tenth of a second) is the task's, not each connection's.
        #expect(governor.mayMove(1, &worker, .download, now: 0))
        governor.moved(1, 100, &worker, .download, now: 0)
        #expect(!governor.mayMove(1, &primary, .download, now: 0), "the worker spent the task's tokens")
        // The primary is slow (moves nothing): the worker takes its share as well. Over one
        // second the two together get the limit's worth, not two.
        var moved = 100
        for step in 1...100 {
            let now = Double(step) / 100
            if governor.mayMove(1, &worker, .download, now: now) {
                governor.moved(1, 10, &worker, .download, now: now)
                moved += 10
            }
            _ = governor.release(1, &worker, now: now)
        }
        #expect(moved >= 1000 && moved <= 1100 + 10, "\(moved) bytes in a second at 1000 B/s")
    }

    @Test func aNewLimitAppliesToEveryConnection() {
        let governor = BandwidthGovernor()
        var primary = TransferThrottle(limit: limit, background: false, now: 0)
        var worker = TransferThrottle(limit: limit, background: false, now: 0)
        worker.share(&primary)
        primary.set(nil, now: 0)  // PATCH: no limit
        #expect(worker.own.isEmpty)
        governor.moved(1, 1_000_000, &worker, .download, now: 0)
        #expect(governor.mayMove(1, &worker, .download, now: 0))
        primary.set(BandwidthLimit(downloadBytesPerSecond: 500), now: 0)
        #expect(worker.own[.download]?.rate == 500)
    }
}
