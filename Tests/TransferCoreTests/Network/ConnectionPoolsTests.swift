import Curl
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// A session's connection pool is closed once no transfer used it for two minutes (its idle
/// connections would otherwise keep their descriptors until the session ends), unless a
/// transfer still holds it; the session's next transfer gets a new pool.
@Suite struct ConnectionPoolsTests {
    @Test func aPoolUnusedForTwoMinutesIsClosedUnlessATransferHoldsIt() throws {
        let pools = ConnectionPools()
        defer { pools.closeAll() }
        let first = try #require(pools.ownPool(for: "a", now: 0))
        pools.retireIdle(now: 100)
        #expect(pools.ownPool(for: "a", now: 100) === first, "a pool in use within two minutes was closed")
        pools.retireIdle(now: 221)
        let second = try #require(pools.ownPool(for: "a", now: 221))
        #expect(second !== first, "a pool unused for two minutes was kept")

        do {
            // A transfer holds the pool: it stays, however long that transfer runs...
            let handle = try EasyHandle()
            try handle.set(.share(second))
            pools.retireIdle(now: 1_000)
            #expect(pools.ownPool(for: "a", now: 221) === second)
            pools.retireIdle(now: 1_000)
            #expect(pools.ownPool(for: "a", now: 221) === second, "a pool a transfer holds was closed")
        }
        // ...and goes at the first sweep after it was let go, if idle for long enough.
        pools.used("a", now: 1_000)
        pools.retireIdle(now: 1_060)
        #expect(pools.ownPool(for: "a", now: 1_060) === second)
        pools.retireIdle(now: 1_181)
        #expect(pools.ownPool(for: "a", now: 1_181) !== second)
    }
}
