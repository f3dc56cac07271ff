internal import HTTPServer
internal import TransferService

/// The scheduler made visible: the queue in admission order (each token's own tasks; its total
/// and positions count every tenant's only for an admin), and counts and rates per class over
/// the whole daemon (an admin's: they are every tenant's load); in a cluster, over every node.
enum SchedulerRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/v1/queue") { request in
            .json(try service.queue(owner: request.owner, limit: try request.limit(), countsEveryone: request.identity.isAdmin))
        }
        router.add("GET", "/v1/stats", access: .admin) { _ in
            .json(try service.stats())
        }
        // The daemons sharing the database and their load: the deployment's shape, an admin's.
        router.add("GET", "/v1/cluster", access: .admin) { _ in
            do {
                return .json(try service.clusterStatus())
            } catch {
                throw APIError(503, "store_unavailable", "the nodes' registry cannot be read (\(error)); retry later")
            }
        }
    }
}
