internal import HTTPServer
internal import TransferService

/// Health, readiness and the contract, outside /v1 and without authentication (probes carry no token).
enum OperationsRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/healthz") { _ in .json(["status": "ok"]) }
        // Ready only while the store is open and commits, the engine thread runs and the daemon is not stopping.
        router.add("GET", "/readyz") { _ in
            switch service.readiness {
            case .ready: return .json(["status": "ready"])
            case .shuttingDown: throw APIError(503, "shutting_down", "the daemon is not ready: \(ServiceReadiness.shuttingDown)")
            // The write errors' own codes: a probe or a person sees the same name as a refused client.
            case .storeFailing(let failure): throw APIError(503, APIError.code(of: failure), "the daemon is not ready: \(ServiceReadiness.storeFailing(failure))")
            case let reason: throw APIError(503, "not_ready", "the daemon is not ready: \(reason)")
            }
        }
        router.add("GET", "/openapi.yaml") { _ in
            .now(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/yaml")]), body: OpenAPIDocument.data))
        }
    }
}
