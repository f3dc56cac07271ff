import Foundation
import JSONModel
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// A segmented download's extra connections through the service on a fake engine (issue 18
/// item 2): the engine's `.segmentConnections` asks, the service's scheduler grants with
/// `.grantConnection` in priority order against each host's cap, and a dropped source is told
/// to the client as `didDropSource`.
@Suite struct FakeEngineSegmentConnectionTests {
    private func grants(_ engine: FakeEngine, _ id: Int) -> [String] {
        engine.commands.compactMap { if case .grantConnection(id, let origin) = $0 { origin } else { nil } }
    }

    @Test func grantsGoInPriorityOrderAgainstEachHostsCap() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session { $0.httpMaximumConnectionsPerHost = 2 }
        let low = try harness.task(in: session, "http://one.invalid/big", priority: TaskPriority(value: 0.2)).id
        let mid = try harness.task(in: session, "http://one.invalid/a", priority: TaskPriority(value: 0.5)).id
        #expect(engine.startedIds == [low, mid])
        // The download wants three more, on its host (full) or its mirror's: the mirror's
        // host has room for two.
        engine.respond(to: low, with: .segmentConnections(SegmentConnections(wanted: 3, origins: ["http://one.invalid:80", "http://mirror.invalid:80"], returned: [])))
        #expect(grants(engine, low) == ["http://mirror.invalid:80", "http://mirror.invalid:80"])
        // A queued task of a higher priority gets the next slot at the download's host.
        let high = try harness.task(in: session, "http://one.invalid/b", priority: TaskPriority(value: 0.9)).id
        #expect(engine.startedIds == [low, mid])
        engine.succeed(mid)
        #expect(engine.startedIds == [low, mid, high])
        #expect(grants(engine, low).count == 2)
        // Then the download's third connection.
        engine.succeed(high)
        #expect(grants(engine, low) == ["http://mirror.invalid:80", "http://mirror.invalid:80", "http://one.invalid:80"])
        // It gives one back at the mirror and wants no more; a task queued for the mirror's
        // host starts in that slot.
        let other = try harness.task(in: session, "http://mirror.invalid/c").id
        #expect(!engine.startedIds.contains(other))
        engine.respond(to: low, with: .segmentConnections(SegmentConnections(wanted: 2, origins: ["http://one.invalid:80", "http://mirror.invalid:80"], returned: ["http://mirror.invalid:80"])))
        #expect(engine.startedIds.last == other)
        #expect(grants(engine, low).count == 3)
    }

    @Test func aDroppedSourceIsToldOnce() async throws {
        let engine = FakeEngine()
        let harness = try ServiceHarness(engine: engine)
        defer { harness.stop() }
        let session = try harness.session()
        let id = try harness.task(in: session, "http://one.invalid/big").id
        let refusal = TaskError(.cannotConnectToHost, "the source was dropped: refused by the daemon's network policy", reason: TaskError.networkPolicyReason)
        engine.respond(to: id, with: .segmentConnections(SegmentConnections(wanted: 3, origins: ["http://one.invalid:80"], returned: [],
                                                                            dropped: [DroppedSource(url: "http://inside.invalid/copy", error: refusal)])))
        engine.succeed(id)
        _ = try await harness.completion(id)
        let drops = try await harness.events(session).filter { $0.type == .didDropSource }
        #expect(drops.count == 1)
        #expect(drops.first?.fields["url"] == .string("http://inside.invalid/copy"))
        #expect(drops.first?.fields["error"] == refusal.jsonValue)
    }
}
