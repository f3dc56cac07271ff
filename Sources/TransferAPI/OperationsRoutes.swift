internal import HTTPServer
internal import TransferCore

/// Health, readiness and the contract, outside /v1 and without authentication.
enum OperationsRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/healthz") { _ in .json(["status": "ok"]) }
        router.add("GET", "/readyz") { _ in
            guard service.isReady else { throw APIError(503, "shutting_down", "the daemon is not ready") }
            return .json(["status": "ready"])
        }
        router.add("GET", "/openapi.yaml") { _ in
            .now(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/yaml")]), body: OpenAPIDocument.data))
        }
    }
}
