import Foundation
import TestSupport

extension DaemonFixture {
    /// A task's transactions, oldest first, from `GET /v1/tasks/{id}/metrics`.
    func transactions(ofTask id: Int) async throws -> [[String: Any]] {
        try await get("/v1/tasks/\(id)/metrics").object()["transactionMetrics"] as? [[String: Any]] ?? []
    }
}
