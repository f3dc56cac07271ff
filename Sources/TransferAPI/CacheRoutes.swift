internal import HTTPServer
internal import TransferService

/// /v1/sessions/{sid}/cache: the URL cache a session uses, the asking token's part of it;
/// /v1/cache: the whole shared URL cache, every tenant's part (an admin's operation).
enum CacheRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("DELETE", "/v1/cache", access: .admin) { _ in
            service.removeAllCachedResponses()
            return .now(HTTPResponse(status: 204))
        }
        // URLCache.removeAllCachedResponses for the session's cache: the shared one for a default
        // session (every default session shares it), the private one for an ephemeral session.
        router.add("DELETE", "/v1/sessions/{sid}/cache") { request in
            try service.removeCachedResponses(session: request.parameter("sid"), owner: request.owner)
            return .now(HTTPResponse(status: 204))
        }
    }
}
