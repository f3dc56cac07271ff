import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Measures a running task's rate from its reported progress (coalesced every 0.1 s, so a
/// window of a few seconds is accurate to a few percent), and checks it against a limit.
struct RateProbe {
    let service: TransferService
    /// The share a measured rate may be off the limit.
    static let tolerance = 0.15

    /// Bytes moved so far in `direction`.
    func bytes(_ id: Int, _ direction: TransferDirection) throws -> Int {
        let progress = try service.task(id, owner: nil).progress
        return direction == .download ? progress.bytesReceived : progress.bytesSent
    }

    /// Waits until the task has moved some bytes (it is connected and flowing).
    func waitUntilFlowing(_ id: Int, _ direction: TransferDirection) async throws {
        try await service.waitFor(id, timeout: 10, "bytes flowing") { snapshot in
            (direction == .download ? snapshot.progress.bytesReceived : snapshot.progress.bytesSent) > 0
        }
    }

    /// Bytes per second of each task over `duration` seconds.
    func measure(_ ids: [Int], _ direction: TransferDirection, over duration: Double) async throws -> [Double] {
        let before = try ids.map { try bytes($0, direction) }
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(Int(duration * 1000)))
        let after = try ids.map { try bytes($0, direction) }
        let elapsed = seconds(since: start)
        return zip(before, after).map { Double($1 - $0) / elapsed }
    }

    func measure(_ id: Int, _ direction: TransferDirection, over duration: Double) async throws -> Double {
        try await measure([id], direction, over: duration)[0]
    }

    /// `measured / limit`, printed with `label`.
    @discardableResult
    static func expectNear(_ measured: Double, _ limit: Int, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) -> Double {
        let ratio = measured / Double(limit)
        print("bandwidth \(label): \(Int(measured)) B/s against a limit of \(limit) B/s, ratio \(String(format: "%.3f", ratio))")
        #expect(abs(ratio - 1) <= tolerance, "\(label): \(Int(measured)) B/s is not within ±15 % of \(limit) B/s", sourceLocation: sourceLocation)
        return ratio
    }
}

extension ServiceHarness {
    /// A download task of `url`, with its own limit if given.
    func download(in session: String, _ url: String, limit: BandwidthLimit? = nil, networkServiceType: NetworkServiceType? = nil) throws -> TransferTask {
        var request = RequestSpec(url: url)
        request.networkServiceType = networkServiceType
        var create = TaskCreate(kind: .download, request: request)
        create.bandwidthLimit = limit
        return try service.createTask(in: session, create, owner: nil)
    }
}
