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
}

extension HTTPResponse {
    static func json(_ page: Page<ServedTask>, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: TransferTask.jsonPage(page.items, next: page.next))
    }

    static func json(_ page: TaskChangePage, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: page.jsonData())
    }
}
