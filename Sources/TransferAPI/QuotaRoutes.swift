internal import HTTPServer
internal import TransferService

/// `GET /v1/quota`: what the asking token holds against its quotas (unfinished tasks, bytes in
/// the data folder) and the quotas themselves; every token sees only its own.
enum QuotaRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/v1/quota") { request in .json(try service.quotaUsage(owner: request.owner)) }
    }
}
