import Foundation
import TestSupport

/// Long-polls a task's progress (`GET /v1/tasks/ID/progress`, `wait` seconds a poll) until
/// `condition` holds for a snapshot, which it returns; throws when `timeout` seconds pass first
/// or the daemon answers anything but 200.
@discardableResult
func pollTask(
    _ client: TestHTTPClient, _ id: Int, timeout: Double, wait: Int = 2,
    until condition: ([String: Any]) -> Bool
) async throws -> [String: Any] {
    let start = ContinuousClock.now
    var version = 0
    while true {
        let response = try await client.sendAsync("GET", "/v1/tasks/\(id)/progress?after=\(version)&wait=\(wait)", timeout: Double(wait) + 30)
        guard response.status == 200 else { throw DaemonFailure("GET /v1/tasks/\(id)/progress: \(response)") }
        let snapshot = try response.jsonObject()
        if condition(snapshot) { return snapshot }
        guard seconds(since: start) < timeout else { throw DaemonFailure("task \(id) never met the condition; last \(snapshot)") }
        version = snapshot["version"] as? Int ?? version
    }
}
