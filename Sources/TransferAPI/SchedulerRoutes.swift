internal import HTTPServer
internal import TransferCore

/// The scheduler made visible: the queue in admission order, and counts and rates per class.
enum SchedulerRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/v1/queue") { request in
            .json(service.queue(owner: request.owner, limit: try request.limit()))
        }
        router.add("GET", "/v1/stats") { _ in
            .json(service.stats())
        }
    }
}
