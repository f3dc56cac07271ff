import Foundation
import Testing
@testable import TransferAPI
@testable import TransferModel

/// Issue 18 item 3, the parts of a POST made cheaper: a batch's answer written in parts, the
/// generated request ids, and routes that differ by a literal after a parameter.
@Suite struct SubmissionPathTests {
    private static func task(_ id: Int) -> TransferTask {
        let request = RequestInfo(url: "http://127.0.0.1:9/files/\(id)", method: "GET", headers: [:], bodyLength: nil,
                                  cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60, networkServiceType: .default)
        var task = TransferTask(id: id, sessionId: "shared", kind: .data, state: .suspended, priority: .default,
                                description: id % 3 == 0 ? "n° \(id) \"quoted\"" : nil, request: request, owner: nil,
                                now: Date(timeIntervalSince1970: 1_700_000_000 + Double(id)))
        task.version = id
        return task
    }

    /// Written in parts on several threads or whole, the answer is the same bytes, tasks in order.
    @Test(arguments: [0, 1, TaskListAnswer.minimumPart * 2 - 1, TaskListAnswer.minimumPart * 4 + 3])
    func aBatchAnswerIsTheListWrittenWhole(count: Int) {
        let tasks = (0..<count).map { Self.task($0 + 1) }
        #expect(TaskListAnswer.json(tasks, under: "tasks") == TransferTask.jsonList(tasks, under: "tasks"))
    }

    @Test func generatedRequestIdsAreSixteenHexDigitsAndNeverRepeat() {
        let ids = (0..<20_000).map { _ in RequestID.generate() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.utf8.count == 16 && $0.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } })
    }

    /// Routes of one length are told apart by any literal, before or after a parameter, and the
    /// first registered that matches wins.
    @Test func aLiteralAfterAParameterDecides() throws {
        var router = Router()
        router.add("POST", "/v1/sessions/{sid}/tasks") { _ in .json(["route": "tasks"]) }
        router.add("POST", "/v1/sessions/{sid}/events") { _ in .json(["route": "events"]) }
        router.add("POST", "/v1/{kind}/{sid}/tasks") { _ in .json(["route": "late"]) }
        router.add("GET", "/v1/sessions/{sid}/tasks/{tid}") { _ in .json(["route": "task"]) }
        let tasks = router.resolve(method: "POST", path: "/v1/sessions/s1/tasks")
        let events = router.resolve(method: "POST", path: "/v1/sessions/s1/events")
        let late = router.resolve(method: "POST", path: "/v1/queues/s1/tasks")
        let task = router.resolve(method: "GET", path: "/v1/sessions/s1/tasks/7")
        #expect(tasks.pattern == "/v1/sessions/{sid}/tasks" && events.pattern == "/v1/sessions/{sid}/events")
        #expect(late.pattern == "/v1/{kind}/{sid}/tasks" && task.pattern == "/v1/sessions/{sid}/tasks/{tid}")
        guard case .found(_, let parameters, _) = task.match, case .found(_, let lateParameters, _) = late.match else {
            Issue.record("a route did not match")
            return
        }
        #expect(parameters == ["sid": "s1", "tid": "7"] && lateParameters == ["kind": "queues", "sid": "s1"])
        #expect(router.resolve(method: "POST", path: "/v1/sessions/s1/other").pattern == nil)
    }
}
