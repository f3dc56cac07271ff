import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Rate limits on real transfers: the service and its engine against a `StreamingOrigin` on
/// 127.0.0.1 that serves as fast as loopback goes (hundreds of MiB/s here), so any rate seen is
/// the limit's. Each test measures over a few seconds and prints its figures.
@Suite(.serialized) struct BandwidthLimitTests {
    static let mebibyte = 1 << 20
    /// Larger than any test downloads in its time: the tasks are cancelled at the end.
    static let resource = GeneratedBytes(count: 256 << 20, seed: 4)

    @Test func globalDownloadLimitHoldsOverSeconds() async throws {
        let origin = try StreamingOrigin(resource: Self.resource)
        defer { origin.stop() }
        let limit = 2 * Self.mebibyte
        let harness = try ServiceHarness { $0.bandwidthLimits.downloadBytesPerSecond = limit }
        defer { harness.stop() }
        let probe = RateProbe(service: harness.service)
        let task = try harness.download(in: try harness.session(), origin.url("/big"))
        try await probe.waitUntilFlowing(task.id, .download)
        let rate = try await probe.measure(task.id, .download, over: 3)
        RateProbe.expectNear(rate, limit, "global download 2 MiB/s over 3 s")
        _ = try harness.service.cancel(task: task.id, owner: nil)
    }

    @Test func taskLimitAppliesAndChangesWhileRunning() async throws {
        let origin = try StreamingOrigin(resource: Self.resource)
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let probe = RateProbe(service: harness.service)
        let first = Self.mebibyte
        let task = try harness.download(in: try harness.session(), origin.url("/big"), limit: BandwidthLimit(downloadBytesPerSecond: first))
        #expect(task.bandwidthLimit == BandwidthLimit(downloadBytesPerSecond: first))
        try await probe.waitUntilFlowing(task.id, .download)
        RateProbe.expectNear(try await probe.measure(task.id, .download, over: 2), first, "task download 1 MiB/s over 2 s")

        // PATCH the running task: the engine follows at once.
        let second = 3 * Self.mebibyte
        var update = try JSONDecoder().decode(TaskUpdate.self, from: Data(#"{"bandwidthLimit": {"downloadBytesPerSecond": \#(second)}}"#.utf8))
        let updated = try harness.service.update(task: task.id, update, owner: nil)
        #expect(updated.bandwidthLimit == BandwidthLimit(downloadBytesPerSecond: second))
        try await Task.sleep(for: .milliseconds(300))
        RateProbe.expectNear(try await probe.measure(task.id, .download, over: 2), second, "task download raised to 3 MiB/s, over 2 s")

        // Removing the limit lets it run at loopback speed.
        update = try JSONDecoder().decode(TaskUpdate.self, from: Data(#"{"bandwidthLimit": null}"#.utf8))
        #expect(try harness.service.update(task: task.id, update, owner: nil).bandwidthLimit == nil)
        try await Task.sleep(for: .milliseconds(200))
        let free = try await probe.measure(task.id, .download, over: 0.5)
        print("bandwidth task download unlimited again: \(Int(free)) B/s")
        #expect(free > Double(2 * second))
        _ = try? harness.service.cancel(task: task.id, owner: nil)  // it may have finished
    }

    @Test func globalLimitChangesWhileRunning() async throws {
        let origin = try StreamingOrigin(resource: Self.resource)
        defer { origin.stop() }
        let harness = try ServiceHarness { $0.bandwidthLimits.downloadBytesPerSecond = 3 * Self.mebibyte }
        defer { harness.stop() }
        let probe = RateProbe(service: harness.service)
        let task = try harness.download(in: try harness.session(), origin.url("/big"))
        try await probe.waitUntilFlowing(task.id, .download)
        RateProbe.expectNear(try await probe.measure(task.id, .download, over: 2), 3 * Self.mebibyte, "global download 3 MiB/s over 2 s")
        let lower = Self.mebibyte
        let limits = try harness.service.updateBandwidthLimits(BandwidthLimitsPatch(global: BandwidthLimitPatch(downloadBytesPerSecond: .some(lower))))
        #expect(limits.downloadBytesPerSecond == lower)
        #expect(harness.service.bandwidthLimits == limits)
        try await Task.sleep(for: .milliseconds(300))
        RateProbe.expectNear(try await probe.measure(task.id, .download, over: 2), lower, "global download lowered to 1 MiB/s, over 2 s")
        _ = try harness.service.cancel(task: task.id, owner: nil)
    }

    @Test func twoTransfersShareTheGlobalLimit() async throws {
        let origin = try StreamingOrigin(resource: Self.resource)
        defer { origin.stop() }
        let limit = 2 * Self.mebibyte
        let harness = try ServiceHarness { $0.bandwidthLimits.downloadBytesPerSecond = limit }
        defer { harness.stop() }
        let probe = RateProbe(service: harness.service)
        let session = try harness.session()
        let tasks = try (0..<2).map { _ in try harness.download(in: session, origin.url("/big")) }
        for task in tasks { try await probe.waitUntilFlowing(task.id, .download) }
        let rates = try await probe.measure(tasks.map(\.id), .download, over: 3)
        RateProbe.expectNear(rates.reduce(0, +), limit, "two downloads sharing 2 MiB/s, together")
        for (index, rate) in rates.enumerated() {
            let share = rate / rates.reduce(0, +)
            print("bandwidth two downloads: task \(index + 1) got \(Int(rate)) B/s, \(String(format: "%.2f", share)) of the total")
            #expect((0.35...0.65).contains(share), "one transfer took \(share) of the shared limit")
        }
        for task in tasks { _ = try harness.service.cancel(task: task.id, owner: nil) }
    }

    @Test func backgroundShareLimitsBackgroundTasksOnly() async throws {
        let origin = try StreamingOrigin(resource: Self.resource)
        defer { origin.stop() }
        let share = Self.mebibyte
        let harness = try ServiceHarness { $0.bandwidthLimits.background = BandwidthLimit(downloadBytesPerSecond: share) }
        defer { harness.stop() }
        let probe = RateProbe(service: harness.service)
        let session = try harness.session()
        let background = try harness.download(in: session, origin.url("/big"), networkServiceType: .background)
        try await probe.waitUntilFlowing(background.id, .download)
        RateProbe.expectNear(try await probe.measure(background.id, .download, over: 2), share, "background-class download, 1 MiB/s share, over 2 s")
        _ = try harness.service.cancel(task: background.id, owner: nil)
        let other = try harness.download(in: session, origin.url("/big"))
        try await probe.waitUntilFlowing(other.id, .download)
        let free = try await probe.measure(other.id, .download, over: 0.5)
        print("bandwidth default-class download beside a background share: \(Int(free)) B/s")
        #expect(free > Double(4 * share))
        _ = try? harness.service.cancel(task: other.id, owner: nil)  // it may have finished
    }

    @Test func uploadLimitHoldsOverSeconds() async throws {
        let origin = try StreamingOrigin(resource: GeneratedBytes(count: 1, seed: 1))
        defer { origin.stop() }
        let limit = Self.mebibyte
        let harness = try ServiceHarness { $0.bandwidthLimits.uploadBytesPerSecond = limit }
        defer { harness.stop() }
        let probe = RateProbe(service: harness.service)
        let body = Data(repeating: 0x61, count: 8 * Self.mebibyte)
        let task = try harness.task(in: try harness.session(), origin.url("/sink"), method: "PUT", body: .base64(body))
        try await probe.waitUntilFlowing(task.id, .upload)
        RateProbe.expectNear(try await probe.measure(task.id, .upload, over: 3), limit, "global upload 1 MiB/s over 3 s")
        _ = try harness.service.cancel(task: task.id, owner: nil)
    }

    /// CURLOPT_MAX_RECV_SPEED_LARGE averages over the transfer: after a pause it sends what the
    /// pause "saved" at full speed. The buckets hold at most a tenth of a second.
    @Test func resumedTransferDoesNotBurst() async throws {
        let origin = try StreamingOrigin(resource: Self.resource)
        defer { origin.stop() }
        let limit = 2 * Self.mebibyte
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let probe = RateProbe(service: harness.service)
        let task = try harness.download(in: try harness.session(), origin.url("/big"), limit: BandwidthLimit(downloadBytesPerSecond: limit))
        try await probe.waitUntilFlowing(task.id, .download)
        try await Task.sleep(for: .milliseconds(500))
        _ = try harness.service.suspend(task: task.id, owner: nil)
        try await Task.sleep(for: .milliseconds(1500))
        let suspendedAt = try probe.bytes(task.id, .download)
        _ = try harness.service.resume(task: task.id, owner: nil)
        let rate = try await probe.measure(task.id, .download, over: 1.5)
        // Measured from the resume, without a settling pause: a burst would land right here.
        RateProbe.expectNear(rate, limit, "2 MiB/s task, 1.5 s after a 1.5 s suspension")
        #expect(try probe.bytes(task.id, .download) > suspendedAt)
        _ = try harness.service.cancel(task: task.id, owner: nil)
    }

    /// Waiting for tokens is not idleness: a 1 s idle timeout does not fire while a transfer
    /// throttled to 8 KiB/s waits about 2 s between its 16 KiB chunks.
    @Test func throttledTimeIsNotIdleTime() async throws {
        let body = randomBytes(32 * 1024)
        let origin = try OriginServer { _ in .respond(body: body) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        var request = RequestSpec(url: origin.url("/slow"))
        request.timeoutInterval = 1
        var create = TaskCreate(kind: .data, request: request)
        create.bandwidthLimit = BandwidthLimit(downloadBytesPerSecond: 8 * 1024)
        let started = ContinuousClock.now
        let task = try harness.service.createTask(in: try harness.session(), create, owner: nil)
        let done = try await harness.completion(task.id, timeout: 15)
        let elapsed = seconds(since: started)
        print("bandwidth 32 KiB at 8 KiB/s with a 1 s idle timeout: \(String(format: "%.2f", elapsed)) s, error \(String(describing: done.error?.name))")
        #expect(done.error == nil)
        #expect(try harness.service.body(task: task.id, owner: nil).body == body)
        #expect(elapsed > 1.5)
    }
}
