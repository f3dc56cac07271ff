import Testing
@testable import TransferEngine
@testable import TransferModel

/// `SegmentPlan`: how a resource is cut into parts, handed out, and split when a connection is
/// free while another has much left (aria2's min-split-size).
@Suite struct SegmentPlanTests {
    static let mib = 1024 * 1024

    @Test func partsTileTheResourceAndTheFirstKeepsWhatIsWritten() throws {
        let plan = try #require(SegmentPlan(total: 8 * Self.mib + 1, count: 4, written: 1000, firstOwner: 0))
        #expect(plan.parts.first?.start == 0 && plan.parts.first?.next == 1000 && plan.parts.first?.owner == 0)
        var end = 0
        for part in plan.parts {
            #expect(part.start == end)
            end = part.end
        }
        #expect(end == 8 * Self.mib + 1)
        #expect(plan.parts.count == 4)
        #expect(plan.written == 1000 && plan.contiguous == 1000)
    }

    @Test func smallResourcesAreNotSplitBelowTheMinimum() {
        #expect(SegmentPlan(total: Self.mib, count: 4, written: 0, firstOwner: 0) == nil)
        #expect(SegmentPlan(total: 3 * Self.mib, count: 8, written: 0, firstOwner: 0)?.parts.count == 3)
    }

    @Test func freePartsAreClaimedThenTheLargestRemainderIsSplit() throws {
        var plan = try #require(SegmentPlan(total: 8 * Self.mib, count: 2, written: 0, firstOwner: 0))
        #expect(plan.claim(for: 1) == 1)
        plan.wrote(4 * Self.mib, in: 1)  // worker 1 is done; worker 0 has not moved
        #expect(plan.part(of: 1) == nil)
        let claimed = plan.claim(for: 2)
        let split = try #require(claimed)
        #expect(plan.parts[0].end == 2 * Self.mib, "the straggler's end is shortened")
        #expect(plan.parts[split].start == 2 * Self.mib && plan.parts[split].end == 4 * Self.mib && plan.parts[split].owner == 2)
        #expect(!plan.isComplete)
    }

    @Test func aRemainderUnderTwiceTheMinimumIsNotSplit() throws {
        var plan = try #require(SegmentPlan(total: 4 * Self.mib, count: 2, written: 0, firstOwner: 0))
        #expect(plan.claim(for: 1) == 1)
        plan.wrote(2 * Self.mib, in: 1)
        plan.wrote(Self.mib / 2, in: 0)
        #expect(plan.claim(for: 2) == nil)
    }

    @Test func aReleasedPartIsTakenFromItsNextByte() throws {
        var plan = try #require(SegmentPlan(total: 4 * Self.mib, count: 2, written: 0, firstOwner: 0))
        #expect(plan.claim(for: 1) == 1)
        plan.wrote(1000, in: 1)
        plan.release(1)
        #expect(plan.claim(for: 2) == 1)
        #expect(plan.parts[1].next == 2 * Self.mib + 1000)
    }

    @Test func contiguousStopsAtTheFirstGap() throws {
        var plan = try #require(SegmentPlan(total: 6 * Self.mib, count: 3, written: 0, firstOwner: 0))
        plan.wrote(2 * Self.mib, in: 0)
        plan.wrote(100, in: 1)
        plan.wrote(2 * Self.mib, in: 2)
        #expect(plan.contiguous == 2 * Self.mib + 100)
        #expect(plan.written == 4 * Self.mib + 100)
    }

    @Test func theFirstConnectionCanTakeTheRest() throws {
        var plan = try #require(SegmentPlan(total: 6 * Self.mib, count: 3, written: 0, firstOwner: 0))
        plan.wrote(1000, in: 0)
        plan.wrote(2 * Self.mib, in: 2)
        plan.extendFirst()
        #expect(plan.parts == [SegmentPlan.Part(start: 0, end: 6 * Self.mib, next: 1000, owner: 0)])
    }
}

/// `SegmentPlan` restored from a checkpoint's parts.
@Suite struct SegmentPlanRestoreTests {
    static let mib = 1024 * 1024

    @Test func eachPartGoesOnFromItsOwnOffset() throws {
        let saved = [ResumePart(start: 0, end: 2 * Self.mib, next: 1000), ResumePart(start: 2 * Self.mib, end: 4 * Self.mib, next: 3 * Self.mib)]
        let plan = try #require(SegmentPlan(total: 4 * Self.mib, restoring: saved, resumedAt: 1000, fileSize: 4 * Self.mib, firstOwner: 0))
        #expect(plan.parts.map(\.next) == [1000, 3 * Self.mib])
        #expect(plan.parts[0].owner == 0 && plan.parts[1].owner == nil)
        #expect(plan.resumeParts == saved)
    }

    @Test func partsThatDoNotTileTheResourceAreRefused() {
        let gap = [ResumePart(start: 0, end: 100, next: 50), ResumePart(start: 200, end: 4 * Self.mib, next: 300)]
        #expect(SegmentPlan(total: 4 * Self.mib, restoring: gap, resumedAt: 50, fileSize: 4 * Self.mib, firstOwner: 0) == nil)
        let short = [ResumePart(start: 0, end: 100, next: 50)]
        #expect(SegmentPlan(total: 4 * Self.mib, restoring: short, resumedAt: 50, fileSize: 4 * Self.mib, firstOwner: 0) == nil)
    }

    @Test func bytesPastTheFilesEndAreFetchedAgain() throws {
        let saved = [ResumePart(start: 0, end: 2 * Self.mib, next: 1000), ResumePart(start: 2 * Self.mib, end: 4 * Self.mib, next: 3 * Self.mib)]
        let plan = try #require(SegmentPlan(total: 4 * Self.mib, restoring: saved, resumedAt: 1000, fileSize: 2 * Self.mib + 10, firstOwner: 0))
        #expect(plan.parts[1].next == 2 * Self.mib + 10)
    }
}
