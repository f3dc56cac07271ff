internal import HTTPServer
internal import TransferService

/// `GET /v1/tasks`: the change feed of every task the token may see, as one long-poll (what the
/// dashboard follows, instead of one progress long-poll per task).
enum TaskChangeRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/v1/tasks") { request in
            let (after, wait, limit) = (try request.after(), try request.wait(), try request.limit())
            return .held { respond in
                service.taskChanges(after: after, limit: limit, wait: wait, owner: request.owner) { page in
                    respond(.json(page))
                }
            }
        }
    }
}
