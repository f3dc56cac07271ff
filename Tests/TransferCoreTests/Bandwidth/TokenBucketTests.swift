import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The token bucket and the priority/service-type mappings, without I/O (a fake clock).
struct TokenBucketTests {
    @Test func refillsAtItsRateAndCapsTheBurst() {
        var bucket = TokenBucket(rate: 1000, now: 0)
        #expect(bucket.capacity == 100)
        #expect(bucket.tokens == 100)
        bucket.take(600)  // one chunk overdraws it
        #expect(!bucket.hasTokens)
        #expect(abs(bucket.secondsUntilTokens - 0.501) < 1e-9)
        bucket.refill(now: 0.5)
        #expect(!bucket.hasTokens)
        bucket.refill(now: 0.6)
        #expect(bucket.hasTokens)
        // A long idle spell (a suspended task) saves a tenth of a second, no more.
        bucket.refill(now: 100)
        #expect(bucket.tokens == 100)
        // The clock going backwards changes nothing.
        bucket.refill(now: 50)
        #expect(bucket.tokens == 100)
    }

    @Test func aNewRateKeepsTheDebtAndCapsTheSurplus() {
        var bucket = TokenBucket(rate: 1000, now: 0)
        bucket.take(1100)
        bucket.setRate(10_000, now: 0)
        #expect(bucket.tokens == -1000)
        #expect(bucket.capacity == 1000)
        bucket.refill(now: 1)
        #expect(bucket.tokens == 1000)
        bucket.setRate(100, now: 1)
        #expect(bucket.tokens == 10)
    }

    @Test(arguments: [(0.0, 1), (0.25, 65), (0.5, 129), (0.75, 192), (1.0, 256)])
    func streamWeightFromPriority(priority: Double, weight: Int) {
        #expect(StreamWeight.forPriority(priority) == weight)
    }

    @Test func dscpPerServiceType() {
        let expected: [NetworkServiceType: Int] = [
            .default: 0, .background: 8, .responsiveData: 18, .avStreaming: 26, .video: 34,
            .responsiveAV: 32, .voice: 46, .voip: 46, .callSignaling: 40,
        ]
        for type in NetworkServiceType.allCases { #expect(type.dscp == expected[type], "\(type)") }
    }

    @Test func governorReleasesWaitersOldestFirst() {
        let governor = BandwidthGovernor()
        governor.setLimits(BandwidthLimits(global: BandwidthLimit(downloadBytesPerSecond: 1000)), now: 0)
        var first = TransferThrottle(limit: nil, background: false, now: 0)
        var second = TransferThrottle(limit: nil, background: false, now: 0)
        #expect(governor.mayMove(1, &first, .download, now: 0))
        governor.moved(1, 500, &first, .download, now: 0)
        #expect(!governor.mayMove(2, &second, .download, now: 0.1))
        #expect(!governor.mayMove(1, &first, .download, now: 0.2))
        // Tokens are back at 0.5 s: the one that waited longer goes first; the other may not
        // take from the bucket it waits on in the meantime.
        #expect(governor.release(2, &second, now: 0.6))
        #expect(!governor.mayMove(1, &first, .download, now: 0.6))
        #expect(governor.mayMove(2, &second, .download, now: 0.6))
        governor.moved(2, 500, &second, .download, now: 0.6)
        #expect(!second.isThrottled)
        #expect(first.isThrottled)
        #expect(!governor.release(1, &first, now: 0.7))
        #expect(governor.release(1, &first, now: 1.2))
    }
}
