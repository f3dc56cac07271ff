internal import FoundationEssentials
internal import HTTPServer
internal import TransferService

/// `GET /metrics`: the daemon's figures in Prometheus' text format. Outside /v1 but, like
/// `/v1/stats`, behind the bearer token when tokens are set (`APIHandler.needsAuthentication`)
/// and an admin's only: the figures are every tenant's together, with no per-token labels.
enum MetricsRoutes {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/metrics", access: .admin) { _ in
            .now(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", contentType)]), body: Data(service.renderMetrics())))
        }
    }
}
