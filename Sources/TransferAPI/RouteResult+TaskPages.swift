internal import FoundationEssentials
internal import HTTPServer
internal import TransferModel

/// Pages of tasks, written by `TaskJSONWriter` (chosen over the generic `json` for these types).
extension RouteResult {
    static func json(_ page: Page<ServedTask>, status: Int = 200) -> RouteResult {
        .now(.json(page, status: status))
    }
}

extension RouteResult {
    static func json(_ task: ServedTask, status: Int = 200) -> RouteResult {
        .now(HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: task.jsonData))
    }

    /// The task with, in a cluster, the node that runs it (`node`, added as the object's last field).
    static func json(_ task: ServedTask, node: String?) -> RouteResult {
        var body = task.jsonData
        if let node, let encoded = try? JSONCoding.encoder.encode(node), body.last == UInt8(ascii: "}") {
            body.removeLast()
            body.append(contentsOf: Array(",\"node\":".utf8) + encoded + [UInt8(ascii: "}")])
        }
        return .now(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: body))
    }
}

extension HTTPResponse {
    static func json(_ page: Page<ServedTask>, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: TransferTask.jsonPage(page.items, next: page.next))
    }

    static func json(_ page: TaskChangePage, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: page.jsonData())
    }
}
