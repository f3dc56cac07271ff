import Testing
@testable import TransferAPI

/// How the open-file limit is shared: a reserve, half the rest at most for API connections, a
/// quarter of those per client address, the remainder for transfers at four descriptors each.
@Suite struct DescriptorBudgetTests {
    @Test func aLowLimitLowersEveryCapAndKeepsTheReserve() {
        let budget = DescriptorBudget(limit: 256, maxConnections: 10_000, maxConnectionsPerClient: nil, maxTransfers: 100)
        #expect(budget.apiConnections == 96)
        #expect(budget.perClient == 24)
        #expect(budget.transfers == 24)
        #expect(budget.apiConnections + budget.transfers * DescriptorBudget.descriptorsPerTransfer + DescriptorBudget.reserve <= 256)
    }

    @Test func aHighLimitKeepsWhatWasAskedFor() {
        let budget = DescriptorBudget(limit: 1 << 20, maxConnections: 10_000, maxConnectionsPerClient: nil, maxTransfers: 32)
        #expect(budget.apiConnections == 10_000)
        #expect(budget.perClient == 2_500)
        #expect(budget.transfers == 32)
    }

    @Test func thePerClientCapIsTheOperatorsWhenSetAndZeroTurnsItOff() {
        #expect(DescriptorBudget(limit: 1 << 20, maxConnections: 1_000, maxConnectionsPerClient: 10, maxTransfers: 8).perClient == 10)
        #expect(DescriptorBudget(limit: 1 << 20, maxConnections: 1_000, maxConnectionsPerClient: 0, maxTransfers: 8).perClient == 0)
        // Never above the API's own cap.
        #expect(DescriptorBudget(limit: 256, maxConnections: 10_000, maxConnectionsPerClient: 5_000, maxTransfers: 8).perClient == 96)
    }

    @Test func aTinyLimitStillLeavesOneOfEach() {
        let budget = DescriptorBudget(limit: 16, maxConnections: 10_000, maxConnectionsPerClient: nil, maxTransfers: 100)
        #expect(budget.apiConnections == 1 && budget.perClient == 1 && budget.transfers == 1)
    }
}
