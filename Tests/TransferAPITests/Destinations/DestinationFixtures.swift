import Foundation
import Synchronization
import Testing
import TestSupport

extension DaemonFixture {
    /// Runs a download of `url` to `destination` as `token` (the fixture's own when left out),
    /// with `conflict` when given; returns the completed task.
    func download(_ url: String, to destination: String, conflict: String? = nil, token: String?? = .none,
                  sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        try await waitForCompletion(try startDownload(url, to: destination, conflict: conflict, token: token, sourceLocation: sourceLocation), token: token)
    }

    /// Creates that download; returns its id.
    func startDownload(_ url: String, to destination: String, conflict: String? = nil, token: String?? = .none,
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        var body: [String: Any] = ["kind": "download", "request": ["url": url], "destination": destination]
        if let conflict { body["conflict"] = conflict }
        let created = try await post("/v1/sessions/shared/tasks", json: body, token: token)
        try #require(created.status == 201, "create download: \(created)", sourceLocation: sourceLocation)
        return try #require(try created.object().int("id"), sourceLocation: sourceLocation)
    }
}

/// Holds every request until `count` have arrived, then lets them all go at once: downloads
/// that finish at the same moment.
final class RequestBarrier: Sendable {
    private let count: Int
    private let arrived = Mutex(0)

    init(count: Int) { self.count = count }

    func wait(timeout: Duration = .seconds(20)) {
        arrived.withLock { $0 += 1 }
        let deadline = ContinuousClock.now + timeout
        while arrived.withLock({ $0 }) < count, ContinuousClock.now < deadline { usleep(1000) }
    }
}

/// The contents of the file at `path`, nil when there is none.
func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
